"""Checks a run's signed seal with tools nobody here wrote: securesystemslib's DSSE envelope and Ed25519 key
(PyPI), and in-toto's attestation bindings (in-toto-attestation, PyPI) for the Statement v1.

    python intoto_verify.py RUN_FOLDER PUBLIC_KEY_FILE

Prints "ok <keyid>" and exits 0 when the envelope is signed by the key, the statement is a valid in-toto
Statement v1, and every subject's SHA-256 is the digest of the file it names under the run folder; else prints
the reason and exits 1.
"""
import hashlib
import json
import os
import sys

from google.protobuf import json_format
from in_toto_attestation.v1 import statement_pb2
from in_toto_attestation.v1.statement import Statement
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey


def main(folder: str, key_path: str) -> int:
    with open(key_path) as f:
        key_dict = json.load(f)
    key = SSlibKey.from_dict(key_dict.pop("keyid"), key_dict)
    with open(os.path.join(folder, "evidence", "attestation.dsse.json")) as f:
        envelope = Envelope.from_dict(json.load(f))
    try:
        accepted = envelope.verify([key], 1)
    except Exception as error:  # securesystemslib raises VerificationError with the reason
        print(f"signature: {error}")
        return 1
    if envelope.payload_type != "application/vnd.in-toto+json":
        print(f"payloadType {envelope.payload_type}")
        return 1
    statement = Statement.copy_from_pb(json_format.Parse(envelope.payload, statement_pb2.Statement()))
    statement.validate()
    for subject in statement.pb.subject:
        path = os.path.join(folder, *subject.name.split("/"))
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if digest != subject.digest["sha256"]:
            print(f"subject {subject.name}: {digest} != {subject.digest['sha256']}")
            return 1
    print("ok " + ",".join(accepted))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
