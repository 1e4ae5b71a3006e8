/**
 * The problem codes of `verify`'s numbered checks of a run folder (docs/evidence-format.md, "Verifying a run",
 * checks 1 to 9 and 11): its events and their chain, the manifest, the payloads, the outputs, the inputs, the
 * bundle (with the catalog it needs), the attestation and the assessments. The log's check 10 is in
 * `_log_codes.ts`. One part of `PROBLEM_CODES` (problem_codes.ts), in the docs' order.
 * @module
 */

/** The codes of the run folder's checks, by family, in the order of docs/evidence-format.md. */
export const VERIFY_CODES = {
  "events.missing": { family: "evidence", check: 1, meaning: "evidence/events.jsonl is missing" },
  "events.unreadable": {
    family: "evidence",
    check: 1,
    meaning:
      "events.jsonl cannot be read: a link, not a plain file, a line past 16 MiB, 1,000 problems of its lines, lines past 3 GiB of weight, or an error of the store",
  },
  "events.empty": { family: "evidence", check: 1, meaning: "events.jsonl has no lines" },
  "events.cut": { family: "evidence", check: 1, meaning: "the last line has no newline: the file was cut" },
  "evidence.extra": {
    family: "evidence",
    check: 1,
    meaning: "evidence/ holds a file or folder that the format does not name",
  },
  "line.not_utf8": { family: "evidence", check: 2, meaning: "a line is not UTF-8" },
  "line.not_json": { family: "evidence", check: 2, meaning: "a line is not JSON" },
  "line.too_deep": {
    family: "evidence",
    check: 2,
    meaning: "a line nests arrays and objects more than 256 deep",
  },
  "line.not_event": {
    family: "evidence",
    check: 2,
    meaning: "a line is JSON but lacks a field, has an unknown one, or a field of the wrong type",
  },
  "line.lone_surrogate": { family: "evidence", check: 2, meaning: "a line holds a lone surrogate escape" },
  "line.not_canonical": { family: "evidence", check: 2, meaning: "a line is not in RFC 8785 form" },
  "line.unknown_type": { family: "evidence", check: 2, meaning: "an event's type is not in the table" },
  "line.payload_key": {
    family: "evidence",
    check: 2,
    meaning: "a payload key of data holds neither null nor a SHA-256",
  },
  "line.output_data": {
    family: "evidence",
    check: 2,
    meaning: "output_artifact_created lacks a good data.path, data.sha256 or data.size",
  },
  "line.input_data": {
    family: "evidence",
    check: 2,
    meaning: "input_staged lacks a good data.name or data.sha256",
  },
  "line.created_data": {
    family: "evidence",
    check: 2,
    meaning: "run_created's data.bundle is not a boolean, or data.signing_key neither null nor a key ID",
  },
  "seq.out_of_order": {
    family: "evidence",
    check: 3,
    meaning: "a seq is not one more than the one before it (line 1: 0)",
  },
  "chain.broken": {
    family: "evidence",
    check: 3,
    meaning: "a prev is not the SHA-256 of the line before it (line 1: null)",
  },
  "run.id_mismatch": {
    family: "evidence",
    check: 3,
    meaning: "a line's run_id is not line 1's, or line 1's is not the run's ID (its folder's name)",
  },
  "order.first_not_created": { family: "evidence", check: 3, meaning: "the first event is not run_created" },
  "order.created_twice": { family: "evidence", check: 3, meaning: "more than one run_created" },
  "order.ends_twice": { family: "evidence", check: 3, meaning: "more than one run_completed or run_failed" },
  "order.after_end": {
    family: "evidence",
    check: 3,
    meaning: "a line follows the run's end; it names the first such line",
  },
  "manifest.missing": { family: "manifest", check: 4, meaning: "manifest.json is missing: not sealed" },
  "manifest.unreadable": { family: "manifest", check: 4, meaning: "manifest.json cannot be read" },
  "manifest.not_json": { family: "manifest", check: 4, meaning: "manifest.json is not JSON" },
  "manifest.not_object": { family: "manifest", check: 4, meaning: "manifest.json is not a JSON object" },
  "manifest.not_canonical": {
    family: "manifest",
    check: 4,
    meaning: "manifest.json is not its RFC 8785 form and one newline",
  },
  "manifest.unknown_field": { family: "manifest", check: 4, meaning: "manifest.json has a field not listed" },
  "manifest.missing_field": { family: "manifest", check: 4, meaning: "manifest.json lacks a field" },
  "manifest.format": {
    family: "manifest",
    check: 4,
    meaning: "format is not provevi-manifest/1 or provevi-manifest/2",
  },
  "manifest.run_id": { family: "manifest", check: 4, meaning: "run_id is not the run's ID" },
  "manifest.count": { family: "manifest", check: 4, meaning: "events is not the number of lines" },
  "manifest.last_hash": { family: "manifest", check: 4, meaning: "last_hash is not the last line's SHA-256" },
  "manifest.status": { family: "manifest", check: 4, meaning: "status is not the one the last event gives" },
  "manifest.sealed_at": { family: "manifest", check: 4, meaning: "sealed_at is not a real UTC time" },
  "manifest.lost": { family: "manifest", check: 4, meaning: "lost is not a list of {type, time, error}" },
  "manifest.payload_entry": {
    family: "manifest",
    check: 4,
    meaning: "payloads is not a list, or an entry is not exactly {sha256, size}",
  },
  "manifest.payload_twice": { family: "manifest", check: 4, meaning: "payloads lists one SHA-256 twice" },
  "manifest.payload_order": { family: "manifest", check: 4, meaning: "payloads is not sorted by sha256" },
  "manifest.payload_bytes": {
    family: "manifest",
    check: 4,
    meaning: "payload_bytes is not the sum of the payloads' sizes",
  },
  "payloads.unreadable": {
    family: "payloads",
    check: 5,
    meaning: "payloads/ or payloads.pack is a link, not a plain folder or file, or cannot be read",
  },
  "payload.unlisted": {
    family: "payloads",
    check: 5,
    meaning: "a file or folder in payloads/, or a record of payloads.pack, is not in the manifest's list",
  },
  "payload.missing": {
    family: "payloads",
    check: 5,
    meaning: "a listed payload has no file (nor, in format 2, a record of payloads.pack)",
  },
  "payload.stored_twice": {
    family: "payloads",
    check: 5,
    meaning: "a payload is stored twice: a file and a record of payloads.pack, or two records",
  },
  "pack.broken": {
    family: "payloads",
    check: 5,
    meaning: "payloads.pack is not whole records: a header that is not one, or the file cut in a record",
  },
  "payload.unreadable": {
    family: "payloads",
    check: 5,
    meaning: "a listed payload is a link, not a plain file, or cannot be read",
  },
  "payload.hash_mismatch": {
    family: "payloads",
    check: 5,
    meaning: "a payload's bytes do not hash to its name (its file's, or its record's header)",
  },
  "payload.size": { family: "payloads", check: 5, meaning: "a payload's size is not the listed size" },
  "payload.event_unlisted": {
    family: "payloads",
    check: 5,
    meaning: "an event names a payload that the manifest does not list (without a manifest: that is missing)",
  },
  "output.unreadable": {
    family: "outputs",
    check: 6,
    meaning: "output/ or a file in it is a link or cannot be read",
  },
  "output.not_plain": {
    family: "outputs",
    check: 6,
    meaning: "something in output/ is a link, a pipe or a device",
  },
  "output.unrecorded": {
    family: "outputs",
    check: 6,
    meaning: "a file in output/ that no output_artifact_created records",
  },
  "output.changed": { family: "outputs", check: 6, meaning: "an output's bytes are not the recorded ones" },
  "output.missing": { family: "outputs", check: 6, meaning: "a recorded output is not in output/" },
  "output.recorded_twice": {
    family: "outputs",
    check: 6,
    meaning: "two output_artifact_created events record one path",
  },
  "input.unstaged": {
    family: "inputs",
    check: 7,
    meaning: "input_verified names an input that no earlier input_staged staged",
  },
  "input.staged_twice": { family: "inputs", check: 7, meaning: "two input_staged events stage one name" },
  "input.sha256": { family: "inputs", check: 7, meaning: "input_verified's data.sha256 is not a SHA-256" },
  "input.expected": {
    family: "inputs",
    check: 7,
    meaning: "input_verified's data.expected is not the staged hash",
  },
  "input.ok": {
    family: "inputs",
    check: 7,
    meaning: "input_verified's data.ok is not the boolean data.sha256 == the staged hash",
  },
  "input.changed": {
    family: "inputs",
    check: 7,
    meaning: "an input's hash at the end is not the staged one",
  },
  "bundle.unreadable": {
    family: "bundle",
    check: 8,
    meaning: "bundle.json is a link, not a plain file, or not a JSON object",
  },
  "bundle.no_pin": {
    family: "bundle",
    check: 8,
    meaning: "bundle.json has no uri, or pinned is neither a text nor null",
  },
  "bundle.other_run": {
    family: "bundle",
    check: 8,
    meaning: "the bundle's URI is not a catalog URI of this run",
  },
  "bundle.no_commit": { family: "bundle", check: 8, meaning: "the pinned URI selects no commit" },
  "bundle.unpinned_versioned": {
    family: "bundle",
    check: 8,
    meaning: "pinned is null, but the catalog's store for the URI has commits",
  },
  "bundle.missing": {
    family: "bundle",
    check: 8,
    meaning: "bundle.json is missing, but run_created records that the run asked for a bundle",
  },
  "bundle.flag_disagrees": {
    family: "bundle",
    check: 8,
    meaning: "run_created's data.bundle and the run file's run.bundle differ",
  },
  "bundle.required": {
    family: "bundle",
    check: 8,
    meaning: "no pinned bundle to compare with, and --require-bundle asks for one",
  },
  "bundle.unreachable": { family: "bundle", check: 8, meaning: "the committed bundle cannot be listed" },
  "bundle.file_unreadable": {
    family: "bundle",
    check: 8,
    meaning: "a file of the committed bundle cannot be read",
  },
  "bundle.file_missing": {
    family: "bundle",
    check: 8,
    meaning: "the committed bundle lacks a file of the run",
  },
  "bundle.file_differs": {
    family: "bundle",
    check: 8,
    meaning: "a file of the committed bundle is not the run's",
  },
  "bundle.file_extra": {
    family: "bundle",
    check: 8,
    meaning: "the committed bundle holds a file that the run does not",
  },
  "attestation.unreadable": {
    family: "attestation",
    check: 9,
    meaning: "attestation.dsse.json is a link, not a plain file, or not UTF-8",
  },
  "attestation.missing": {
    family: "attestation",
    check: 9,
    meaning: "no attestation, but run_created records a signing key, or --trust requires one",
  },
  "attestation.not_envelope": {
    family: "attestation",
    check: 9,
    meaning: "the file is not a DSSE envelope (JSON, payload and sigs in base64, signatures a list)",
  },
  "attestation.not_canonical": {
    family: "attestation",
    check: 9,
    meaning: "the file is not its envelope's RFC 8785 form and one newline",
  },
  "attestation.payload_type": {
    family: "attestation",
    check: 9,
    meaning: "payloadType is not application/vnd.in-toto+json",
  },
  "attestation.statement": {
    family: "attestation",
    check: 9,
    meaning: "the signed statement is not the one the run's evidence gives",
  },
  "attestation.key_absent": {
    family: "attestation",
    check: 9,
    meaning: "no signature has the keyid that run_created records",
  },
  "attestation.untrusted": {
    family: "attestation",
    check: 9,
    meaning: "with --trust: no signature verifies with a trusted key",
  },
  "attestation.flag_disagrees": {
    family: "attestation",
    check: 9,
    meaning: "the run file stored as run_created's payload has run.sign_key, and run_created records no key",
  },
  "assessments.unreadable": {
    family: "assessments",
    check: 11,
    meaning: "assessments.jsonl is a link, not a plain file, or not UTF-8",
  },
  "assessments.line": {
    family: "assessments",
    check: 11,
    meaning:
      "a line of assessments.jsonl is not an assessment in RFC 8785 form of this run, numbered in order",
  },
  "assessments.chain": {
    family: "assessments",
    check: 11,
    meaning: "a prev is not the hash of the line before it (line 1: the manifest's last_hash)",
  },
  "assessments.target": {
    family: "assessments",
    check: 11,
    meaning: "an assessment judges an event or a span that the run's events do not have",
  },
  "catalog.missing": {
    family: "bundle",
    check: 8,
    meaning: "a bundle or an experiment needs a catalog, and none was given",
  },
  "catalog.unopenable": { family: "bundle", check: 8, meaning: "the catalog cannot be opened" },
};
