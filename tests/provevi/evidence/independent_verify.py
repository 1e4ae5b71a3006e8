"""A second verifier of a run folder, written from docs/evidence-format.md alone (no code of this repository),
to show that the document is enough: the tests run it on every test vector and require that it finds the same
problems as `prove verify`, by file, line and seq.

    python independent_verify.py RUN_FOLDER [TRUSTED_PUBLIC_KEY]

Prints a JSON list of problems, each {"check", "file", "line", "seq", "text"}. Needs securesystemslib (PyPI)
for Ed25519, only when a key is trusted.
"""
import base64
import calendar
import hashlib
import json
import math
import os
import re
import sys

import yaml

FIELDS = ["run_id", "seq", "time", "type", "component", "actor", "refs", "data", "payload", "confidence",
          "prev", "trace_id", "span_id", "parent_span_id", "started_at"]
TYPES = {"run_created", "access_requested", "access_granted", "access_denied", "context_resolved",
         "snapshot_materialized", "input_staged", "sandbox_started", "prompt_rendered", "model_called",
         "tool_called", "trace_imported", "sandbox_completed", "input_verified", "output_artifact_created",
         "run_completed", "run_failed", "step_failed", "note_added", "telemetry_blocked", "telemetry_problem",
         "span_recorded", "spans_received"}
MANIFEST_FIELDS = {"format", "run_id", "status", "events", "last_hash", "payloads", "payload_bytes", "lost",
                   "sealed_at"}
TIME = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d{1,9})?Z$", re.ASCII)  # ASCII digits only
SHA = re.compile(r"^[0-9a-f]{64}$")


def is_time(v):
    m = TIME.match(v) if isinstance(v, str) else None
    if not m:
        return False
    y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
    return 1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1] and h < 24 and mi < 60 and s < 60


def is_sha(v):
    return isinstance(v, str) and bool(SHA.match(v))


def is_hex(v, n):
    return isinstance(v, str) and re.fullmatch("[0-9a-f]{%d}" % n, v) is not None


def es_number(n):
    """A number as ECMAScript's Number.prototype.toString writes the double it is (the doc: RFC 8785 numbers)."""
    if isinstance(n, bool):
        return "true" if n else "false"
    n = float(n)  # a JSON number is a double: an integer past 2**53 is the double nearest it
    if math.isnan(n) or math.isinf(n):
        raise ValueError("not a JSON number")
    if n == 0:
        return "0"
    if n < 0:
        return "-" + es_number(-n)
    # repr gives the shortest digits that read back as the same double, as ECMAScript does.
    mant, _, exp = repr(n).partition("e")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + int(exp or 0)  # where the decimal point is, counted from the start of whole
    point -= len(whole + frac) - len((whole + frac).lstrip("0"))
    digits = digits.rstrip("0")
    k, e = len(digits), point
    if k <= e <= 21:
        return digits + "0" * (e - k)
    if 0 < e <= 21:
        return digits[:e] + "." + digits[e:]
    if -6 < e <= 0:
        return "0." + "0" * (-e) + digits
    x = e - 1
    sign = "+" if x >= 0 else "-"
    return (digits[0] + ("." + digits[1:] if k > 1 else "")) + "e" + sign + str(abs(x))


def no_constant(name):
    """NaN, Infinity and -Infinity, which Python's json reads, are not JSON."""
    raise ValueError("not JSON: " + name)


def as_double(text):
    """A JSON number is the IEEE 754 double nearest it (the doc: RFC 8785 numbers), so 1.0 and 1e0 are the
    integer 1, and 9007199254740993 is ...992; one past the largest double stays infinity (no RFC 8785 form)."""
    d = float(text)
    return int(d) if math.isfinite(d) and d.is_integer() else d


def loads(text):
    """JSON text (str; bytes must be UTF-8, and a BOM is not JSON) with its numbers read as doubles."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")  # UnicodeDecodeError is a ValueError
    return json.loads(text, parse_constant=no_constant, parse_float=as_double, parse_int=as_double)


SAFE = 2 ** 53 - 1  # the doc: a whole number is at most 2^53 - 1, past which two integers read as one double


def safe_int(v):
    """An integer no bigger than SAFE either way (not a boolean, which Python counts as an int)."""
    return isinstance(v, int) and not isinstance(v, bool) and -SAFE <= v <= SAFE


def whole(v):
    """A whole number: an integer from 0 to SAFE."""
    return safe_int(v) and v >= 0


def same_number(a, b):
    return whole(a) and a == b


def jcs(v):
    """RFC 8785: sorted keys (by UTF-16 code units), no whitespace, minimal escapes, ES numbers."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        try:
            return es_number(v)
        except OverflowError:  # an integer past the largest double
            raise ValueError("not a JSON number")
    if isinstance(v, str):
        v.encode("utf-8")  # a lone surrogate raises: it has no UTF-8 form
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    keys = sorted(v.keys(), key=lambda k: k.encode("utf-16-be"))
    return "{" + ",".join(jcs(k) + ":" + jcs(v[k]) for k in keys) + "}"


def is_output_path(p):
    if not isinstance(p, str) or p == "" or "\\" in p or "\0" in p:
        return False
    return all(seg not in ("", ".", "..") for seg in p.split("/"))


def b64(text):
    """Base64 as DSSE allows: standard or URL-safe alphabet, not both, padding optional."""
    if re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", text):
        alt = b"+/"
    elif re.fullmatch(r"[A-Za-z0-9_-]*={0,2}", text):
        alt = b"-_"
    else:
        raise ValueError("not base64")
    text = text.rstrip("=")
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=alt, validate=True)


def plain_file(path):
    return os.path.isfile(path) and not os.path.islink(path)


ASSESSMENT_FIELDS = ["created_at", "id", "name", "prev", "rationale", "run_id", "seq", "source", "span_id", "value"]


def check_assessments(folder, run_id, manifest_path, events, problem):
    path = os.path.join(folder, "assessments.jsonl")
    if not os.path.lexists(path):
        return
    if not plain_file(path):
        problem("assessments.unreadable", "assessments.jsonl", "a link or not a plain file")
        return
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        problem("assessments.unreadable", "assessments.jsonl", "not UTF-8")
        return
    last = None
    try:
        with open(manifest_path, "rb") as f:
            h = json.loads(f.read()).get("last_hash")
        last = h if is_sha(h) else None
    except Exception:
        last = None
    seqs = {e["seq"] for e in events}
    spans = {e["span_id"] for e in events if e["span_id"] is not None}
    lines = text.split("\n")
    if lines[-1] != "":
        problem("assessments.line", "assessments.jsonl", "no newline at the end", len(lines))
    lines = lines[:-1]
    prev, want = last, 1
    for i, line in enumerate(lines):
        n = i + 1
        try:
            a = loads(line)
        except ValueError:
            a = None
        text_or_none = lambda v: v is None or isinstance(v, str)
        good = (isinstance(a, dict) and sorted(a) == ASSESSMENT_FIELDS and whole(a["id"]) and a["id"] >= 1
                and isinstance(a["run_id"], str) and isinstance(a["name"], str) and a["name"] != ""
                and (a["seq"] is None or whole(a["seq"])) and (a["span_id"] is None or is_hex(a["span_id"], 16))
                and (a["seq"] is None or a["span_id"] is None) and text_or_none(a["rationale"])
                and text_or_none(a["source"]) and is_time(a["created_at"]) and is_sha(a["prev"])
                and jcs(a) == line)
        if not good:
            problem("assessments.line", "assessments.jsonl", "not an assessment line", n)
        else:
            if a["id"] != want:
                problem("assessments.line", "assessments.jsonl", "id out of order", n)
            want = a["id"]
            if a["run_id"] != run_id:
                problem("assessments.line", "assessments.jsonl", "another run", n)
            if prev is not None and a["prev"] != prev:
                problem("assessments.chain", "assessments.jsonl", "prev does not chain", n)
            if a["seq"] is not None and a["seq"] not in seqs:
                problem("assessments.target", "assessments.jsonl", "no such event", n)
            if a["span_id"] is not None and a["span_id"] not in spans:
                problem("assessments.target", "assessments.jsonl", "no such span", n)
        want += 1
        prev = hashlib.sha256(line.encode("utf-8")).hexdigest()


PACK_HEADER = re.compile(rb"([0-9a-f]{64}) (0|[1-9][0-9]{0,14})")


def read_pack_file(ev_dir):
    path = os.path.join(ev_dir, "payloads.pack")
    if not plain_file(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def parse_pack(pack):
    """The whole records of a pack, (sha256, offset, size) each, and whether it breaks before its end."""
    records, at = [], 0
    while at < len(pack):
        end = pack.find(b"\n", at, at + 81)
        m = PACK_HEADER.fullmatch(pack[at:end]) if end >= 0 else None
        if not m:
            return records, True
        size, offset = int(m.group(2)), end + 1
        if offset + size + 1 > len(pack) or pack[offset + size] != 0x0A:
            return records, True
        records.append((m.group(1).decode(), offset, size))
        at = offset + size + 1
    return records, False


def check_pack(ev_dir, listed, files, manifest, problem):
    """payloads.pack: each record hashes to its header, is listed with its size, and is stored once."""
    pack = read_pack_file(ev_dir)
    held = {}
    if pack is None:
        if os.path.lexists(os.path.join(ev_dir, "payloads.pack")):
            problem("payloads.unreadable", "payloads.pack", "a link or not a plain file")
        return held
    records, broken = parse_pack(pack)
    for sha, offset, size in records:
        if sha in held or sha in files:
            problem("payload.stored_twice", "payloads.pack", "stored twice")
            continue
        held[sha] = size
        if manifest is not None and sha not in listed:
            problem("payload.unlisted", "payloads.pack", "record not listed")
        elif hashlib.sha256(pack[offset:offset + size]).hexdigest() != sha:
            problem("payload.hash_mismatch", "payloads.pack", "record changed")
        elif manifest is not None and listed[sha] != size:
            problem("payload.size", "payloads.pack", "record size")
    if broken:
        problem("pack.broken", "payloads.pack", "not whole records")
    return held


def verify(folder, trusted=None):
    problems = []

    def problem(code, file, text, line=None, seq=None):
        problems.append({"code": code, "file": file, "line": line, "seq": seq, "text": text})

    run_id = os.path.basename(os.path.normpath(folder))
    ev_dir = os.path.join(folder, "evidence")
    events_path = os.path.join(ev_dir, "events.jsonl")
    lines, events, complete, settled = [], [], True, True
    readable = plain_file(events_path) and not os.path.islink(ev_dir)
    if not readable:
        problem("events.missing", "events.jsonl", "events.jsonl is missing or not a plain file")
        complete = False
    else:
        with open(events_path, "rb") as f:
            data = f.read()
        cut = len(data) > 0 and not data.endswith(b"\n")
        raw = data.split(b"\n")
        if not cut:
            raw = raw[:-1]
        if cut:
            problem("events.cut", "events.jsonl", "no newline at the end", line=len(raw))
            settled = False
        if not raw and not cut:
            problem("events.empty", "events.jsonl", "no events")
        lines = raw
        after_bad, last_seq, first_id = False, None, None
        for i, b in enumerate(raw):
            n = i + 1

            def bad(code, text, seq=None):
                nonlocal after_bad, complete
                problem(code, "events.jsonl", text, line=n, seq=seq)
                complete, after_bad = False, True

            try:
                text = b.decode("utf-8")
            except UnicodeDecodeError:
                bad("line.not_utf8", "not UTF-8")
                continue
            try:
                e = loads(text)
            except ValueError:
                if cut and i == len(raw) - 1:
                    complete = False
                    continue
                bad("line.not_json", "not JSON")
                continue
            seq = e.get("seq") if isinstance(e, dict) else None
            seq = seq if safe_int(seq) else None
            ok = isinstance(e, dict) and set(e.keys()) == set(FIELDS) and (
                isinstance(e["run_id"], str) and e["run_id"] and seq is not None and seq >= 0
                and is_time(e["time"]) and isinstance(e["type"], str) and e["type"]
                and isinstance(e["component"], str) and e["component"] and isinstance(e["actor"], str)
                and isinstance(e["refs"], list) and all(isinstance(r, str) for r in e["refs"])
                and isinstance(e["data"], dict) and (e["payload"] is None or is_sha(e["payload"]))
                and e["confidence"] in ("observed", "parsed", "inferred", "verified")
                and (e["prev"] is None or is_sha(e["prev"]))
                and (e["trace_id"] is None or is_hex(e["trace_id"], 32))
                and (e["span_id"] is None or is_hex(e["span_id"], 16))
                and (e["parent_span_id"] is None or is_hex(e["parent_span_id"], 16))
                and (e["started_at"] is None or is_time(e["started_at"])))
            if not ok:
                bad("line.not_event", "not an event", seq)
                continue
            prev_bad, after_bad = after_bad, False
            try:
                if jcs(e) != text:
                    problem("line.not_canonical", "events.jsonl", "not canonical", n, seq)
            except UnicodeEncodeError:
                problem("line.lone_surrogate", "events.jsonl", "lone surrogate", n, seq)
            except ValueError:  # a number no double holds (1e400): it has no RFC 8785 form
                problem("line.not_canonical", "events.jsonl", "not canonical", n, seq)
            if e["type"] not in TYPES:
                problem("line.unknown_type", "events.jsonl", "unknown type", n, seq)
            for k, v in e["data"].items():
                if k.endswith("_payload") and v is not None and not is_sha(v):
                    problem("line.payload_key", "events.jsonl", "payload key", n, seq)
            d = e["data"]
            if e["type"] == "output_artifact_created":
                p = d.get("path")
                if not (isinstance(p, str) and p and "\\" not in p and "\0" not in p
                        and all(s not in ("", ".", "..") for s in p.split("/"))):
                    problem("line.output_data", "events.jsonl", "output path", n, seq)
                if not is_sha(d.get("sha256")):
                    problem("line.output_data", "events.jsonl", "output sha256", n, seq)
                if not whole(d.get("size")):
                    problem("line.output_data", "events.jsonl", "output size", n, seq)
            if e["type"] == "run_created":
                if "bundle" in d and not isinstance(d["bundle"], bool):
                    problem("line.created_data", "events.jsonl", "bundle not a boolean", n, seq)
                if "signing_key" in d and d["signing_key"] is not None and not is_sha(d["signing_key"]):
                    problem("line.created_data", "events.jsonl", "signing_key not a key ID", n, seq)
            if e["type"] == "input_staged":
                if not (isinstance(d.get("name"), str) and d.get("name")):
                    problem("line.input_data", "events.jsonl", "input name", n, seq)
                if not is_sha(d.get("sha256")):
                    problem("line.input_data", "events.jsonl", "input sha256", n, seq)
            want = i if last_seq is None else last_seq + 1
            if seq != want and not prev_bad:
                problem("seq.out_of_order", "events.jsonl", "out of sequence", n, seq)
            last_seq = seq
            first_id = first_id or e["run_id"]
            if e["run_id"] != first_id:
                problem("run.id_mismatch", "events.jsonl", "another run", n, seq)
            expected = None if i == 0 else hashlib.sha256(raw[i - 1]).hexdigest()
            if e["prev"] != expected and not prev_bad:
                problem("chain.broken", "events.jsonl", "prev", n, seq)
            events.append((n, e))
        if events and events[0][0] == 1 and events[0][1]["type"] != "run_created":
            problem("order.first_not_created", "events.jsonl", "first is not run_created", 1, events[0][1]["seq"])
        created = [(n, e) for n, e in events if e["type"] == "run_created"]
        if len(created) > 1:
            problem("order.created_twice", "events.jsonl", "created twice", created[1][0], created[1][1]["seq"])
        ends = [(n, e) for n, e in events if e["type"] in ("run_completed", "run_failed")]
        if len(ends) > 1:
            problem("order.ends_twice", "events.jsonl", "ends twice", ends[1][0], ends[1][1]["seq"])
        if ends and ends[0][0] != len(raw):
            after = [e for n, e in events if n == ends[0][0] + 1]
            problem("order.after_end", "events.jsonl", "events after the end", ends[0][0] + 1, after[0]["seq"] if after else None)
            settled = False
        if events and events[0][0] == 1 and events[0][1]["run_id"] != run_id:
            problem("run.id_mismatch", "events.jsonl", "not the folder's run", 1, events[0][1]["seq"])

    # 4. The manifest.
    manifest = None
    manifest_path = os.path.join(ev_dir, "manifest.json")
    if not plain_file(manifest_path):
        problem("manifest.missing", "manifest.json", "missing")
    else:
        with open(manifest_path, "rb") as f:
            mtext = f.read()
        try:
            manifest = loads(mtext)
        except ValueError:
            problem("manifest.not_json", "manifest.json", "not JSON")
        if manifest is not None and not isinstance(manifest, dict):
            problem("manifest.not_object", "manifest.json", "not an object")
            manifest = None
        if manifest is not None:
            m = manifest
            for k in set(m) ^ MANIFEST_FIELDS:
                problem("manifest.unknown_field" if k not in MANIFEST_FIELDS else "manifest.missing_field", "manifest.json", "field " + k)
            if "sealed_at" in m and not is_time(m["sealed_at"]):
                problem("manifest.sealed_at", "manifest.json", "sealed_at")
            if "format" in m and m["format"] not in ("provevi-manifest/1", "provevi-manifest/2"):
                problem("manifest.format", "manifest.json", "format")
            if "run_id" in m and m["run_id"] != run_id:
                problem("manifest.run_id", "manifest.json", "run_id")
            unread = (not lines and not complete) or not settled
            if not unread:
                if "events" in m and not same_number(m["events"], len(lines)):
                    problem("manifest.count", "manifest.json", "events")
                last = hashlib.sha256(lines[-1]).hexdigest() if lines else None
                if "last_hash" in m and m["last_hash"] != last:
                    problem("manifest.last_hash", "manifest.json", "last_hash")
                last_parsed = bool(events) and events[-1][0] == len(lines)
                if last_parsed or not lines:
                    t = events[-1][1]["type"] if last_parsed else None
                    status = {"run_completed": "completed", "run_failed": "failed"}.get(t, "incomplete")
                    if "status" in m and m["status"] != status:
                        problem("manifest.status", "manifest.json", "status")
            if "lost" in m:
                if not isinstance(m["lost"], list):
                    problem("manifest.lost", "manifest.json", "lost")
                else:
                    for x in m["lost"]:
                        if not (isinstance(x, dict) and set(x) == {"type", "time", "error"}
                                and isinstance(x["type"], str) and isinstance(x["error"], str)
                                and is_time(x["time"])):
                            problem("manifest.lost", "manifest.json", "lost entry")
            if "payloads" in m:
                if not isinstance(m["payloads"], list):
                    problem("manifest.payload_entry", "manifest.json", "payloads")
                else:
                    total, previous, unsorted = 0, "", False
                    for p in m["payloads"]:
                        if not (isinstance(p, dict) and set(p) == {"sha256", "size"} and is_sha(p["sha256"])
                                and whole(p["size"])):
                            problem("manifest.payload_entry", "manifest.json", "payload entry")
                            continue
                        if p["sha256"] == previous:
                            problem("manifest.payload_twice", "manifest.json", "payload twice")
                        elif p["sha256"] < previous and not unsorted:
                            unsorted = True
                            problem("manifest.payload_order", "manifest.json", "payloads unsorted")
                        previous = p["sha256"]
                        total += p["size"]
                    if "payload_bytes" in m and not same_number(m["payload_bytes"], total):
                        problem("manifest.payload_bytes", "manifest.json", "payload_bytes")
            try:
                same = jcs(m) + "\n" == mtext.decode("utf-8", "replace")
            except ValueError:
                same = False
            if not same:
                problem("manifest.not_canonical", "manifest.json", "not canonical")

    # 1. Nothing else in evidence/ (payloads.pack in format 2, or before the seal, only).
    packed = manifest is None or manifest.get("format") == "provevi-manifest/2"
    if os.path.isdir(ev_dir) and not os.path.islink(ev_dir):
        for name in sorted(os.listdir(ev_dir)):
            if name not in ("events.jsonl", "manifest.json", "payloads", "attestation.dsse.json") \
                    and not (packed and name == "payloads.pack"):
                problem("evidence.extra", name, "not part of the format")

    # 5. Payloads.
    listed = {}
    if manifest is not None and isinstance(manifest.get("payloads"), list):
        listed = {p["sha256"]: p["size"] for p in manifest["payloads"] if isinstance(p, dict) and is_sha(p.get("sha256"))}
    pdir = os.path.join(ev_dir, "payloads")
    names = sorted(os.listdir(pdir)) if os.path.isdir(pdir) and not os.path.islink(pdir) else []
    for name in names:
        if manifest is not None and name not in listed:
            problem("payload.unlisted", "payloads/" + name, "not listed")
    held = check_pack(ev_dir, listed, set(names), manifest, problem) if packed else {}
    for sha, size in listed.items():
        if sha in held:
            continue
        path = os.path.join(pdir, sha)
        if not plain_file(path):
            # "a listed payload is a link, not a plain file": unreadable; nothing there at all: missing
            there = os.path.lexists(path) and os.path.isdir(pdir) and not os.path.islink(pdir)
            problem("payload.unreadable" if there else "payload.missing", "payloads/" + sha, "missing")
            continue
        with open(path, "rb") as f:
            b = f.read()
        if hashlib.sha256(b).hexdigest() != sha:
            problem("payload.hash_mismatch", "payloads/" + sha, "changed")
        elif len(b) != size:
            problem("payload.size", "payloads/" + sha, "size")
    for n, e in events:
        named = [e["payload"]] if e["payload"] else []
        named += [v for k, v in e["data"].items() if k.endswith("_payload") and is_sha(v)]
        for sha in named:
            if manifest is not None and sha not in listed:
                problem("payload.event_unlisted", "events.jsonl", "payload not listed", n, e["seq"])
            elif manifest is None and sha not in names and sha not in held:
                problem("payload.event_unlisted", "events.jsonl", "payload in neither place", n, e["seq"])

    # 6. Outputs.
    recorded = {}
    for n, e in events:
        d = e["data"]
        good = whole(d.get("size"))
        if e["type"] == "output_artifact_created" and is_output_path(d.get("path")) and is_sha(d.get("sha256")) and good:
            if d["path"] in recorded:
                problem("output.recorded_twice", "events.jsonl", "recorded twice", n, e["seq"])
            else:
                recorded[d["path"]] = d
    out = os.path.join(folder, "output")
    found = {}
    if os.path.islink(out):
        problem("output.unreadable", "output/", "a link")
    elif os.path.isdir(out):
        for root, dirs, files in os.walk(out):
            for name in dirs + files:
                full = os.path.join(root, name)
                rel = os.path.relpath(full, out).replace(os.sep, "/")
                if os.path.islink(full):
                    problem("output.not_plain", "output/" + rel, "a link")
                elif os.path.isfile(full):
                    found[rel] = full
    for rel, full in sorted(found.items()):
        want = recorded.get(rel)
        if want is None:
            if complete:
                problem("output.unrecorded", "output/" + rel, "not recorded")
            continue
        with open(full, "rb") as f:
            b = f.read()
        if hashlib.sha256(b).hexdigest() != want["sha256"] or len(b) != want.get("size"):
            problem("output.changed", "output/" + rel, "changed")
    for rel in recorded:
        if rel not in found:
            problem("output.missing", "output/" + rel, "missing")

    # 7. Inputs, recomputed.
    staged = {}
    for n, e in events:
        d = e["data"]
        if e["type"] == "input_staged" and isinstance(d.get("name"), str) and is_sha(d.get("sha256")):
            if d["name"] in staged:
                problem("input.staged_twice", "events.jsonl", "staged twice", n, e["seq"])
            else:
                staged[d["name"]] = d["sha256"]
        if e["type"] != "input_verified":
            continue
        if d.get("name") not in staged:
            problem("input.unstaged", "events.jsonl", "unknown input", n, e["seq"])
            continue
        want = staged[d["name"]]
        if not is_sha(d.get("sha256")):
            problem("input.sha256", "events.jsonl", "sha256", n, e["seq"])
            continue
        if "expected" in d and d["expected"] != want:
            problem("input.expected", "events.jsonl", "expected", n, e["seq"])
        if not isinstance(d.get("ok"), bool):
            problem("input.ok", "events.jsonl", "ok not a boolean", n, e["seq"])
        elif d["ok"] != (d["sha256"] == want):
            problem("input.ok", "events.jsonl", "ok is wrong", n, e["seq"])
        if d["sha256"] != want:
            problem("input.changed", "events.jsonl", "changed", n, e["seq"])

    # 8. The bundle, without a catalog: a bundle.json is never compared, which is a problem.
    created = events[0][1] if events and events[0][1]["type"] == "run_created" else None
    flag = created["data"].get("bundle") if created else None
    flag = flag if isinstance(flag, bool) else None
    file_flag = None
    run_section = None
    if created and is_sha(created.get("payload")):
        try:
            with open(os.path.join(pdir, created["payload"]), "rb") as f:
                rf = yaml.safe_load(f.read().decode("utf-8"))
            if isinstance(rf, dict) and isinstance(rf.get("run"), dict):
                run_section = rf["run"]
                file_flag = rf["run"].get("bundle") is True
        except Exception:
            file_flag = None
    if flag is not None and file_flag is not None and flag != file_flag:
        problem("bundle.flag_disagrees", "events.jsonl", "the two bundle flags differ", 1, created["seq"])
    bundle_json = os.path.join(folder, "bundle.json")
    if os.path.lexists(bundle_json):
        problem("catalog.missing", "bundle.json", "no catalog to compare the bundle with")
    elif flag is True or file_flag is True:
        problem("bundle.missing", "bundle.json", "asked for, and missing")

    # 11. The assessments.
    check_assessments(folder, run_id, manifest_path, [e for _, e in events], problem)

    # 9. The signed seal.
    recorded_key = created["data"].get("signing_key") if created else None
    sign_key = run_section.get("sign_key") if run_section else None
    if not isinstance(recorded_key, str) and isinstance(sign_key, str) and sign_key:
        problem("attestation.flag_disagrees", "events.jsonl", "run file names a key, none recorded", 1, created["seq"])
    att = os.path.join(ev_dir, "attestation.dsse.json")
    if not os.path.lexists(att):
        if isinstance(recorded_key, str) or trusted:
            problem("attestation.missing", "attestation.dsse.json", "missing")
    else:
        with open(att, "rb") as f:
            att_bytes = f.read()
        try:
            text = att_bytes.decode("utf-8")
        except UnicodeDecodeError:
            problem("attestation.unreadable", "attestation.dsse.json", "not UTF-8")
            return problems
        try:
            env = loads(text)
            body = b64(env["payload"])
            sigs = [(s.get("keyid", ""), b64(s["sig"])) for s in env["signatures"]]
            if any(not isinstance(k, str) for k, _ in sigs) or "payloadType" not in env:
                raise ValueError("keyid")
        except Exception:
            problem("attestation.not_envelope", "attestation.dsse.json", "not an envelope")
            return problems
        if (jcs(env) + "\n").encode("utf-8") != att_bytes:
            problem("attestation.not_canonical", "attestation.dsse.json", "not canonical")
        if env["payloadType"] != "application/vnd.in-toto+json":
            problem("attestation.payload_type", "attestation.dsse.json", "payloadType")
        matched, m = False, None
        if readable and plain_file(manifest_path):
            with open(events_path, "rb") as f:
                ev_bytes = f.read()
            with open(manifest_path, "rb") as f:
                m_bytes = f.read()
            try:
                m = loads(m_bytes)
            except ValueError:
                m = None
        if readable and isinstance(m, dict):
            subject = [{"name": "evidence/events.jsonl", "digest": {"sha256": hashlib.sha256(ev_bytes).hexdigest()}},
                       {"name": "evidence/manifest.json", "digest": {"sha256": hashlib.sha256(m_bytes).hexdigest()}}]
            pack = read_pack_file(ev_dir)
            in_pack = {r[0] for r in parse_pack(pack)[0]} if pack is not None else set()
            subject += [{"name": "evidence/payloads/" + p["sha256"], "digest": {"sha256": p["sha256"]}}
                        for p in m.get("payloads", []) if p["sha256"] not in in_pack]
            if pack is not None:
                subject.append({"name": "evidence/payloads.pack", "digest": {"sha256": hashlib.sha256(pack).hexdigest()}})
            subject += [{"name": "output/" + p, "digest": {"sha256": d["sha256"]}} for p, d in recorded.items()]
            subject.sort(key=lambda s: s["name"].encode("utf-16-be"))
            c = created["data"] if created else {}
            statement = {
                "_type": "https://in-toto.io/Statement/v1",
                "subject": subject,
                "predicateType": "https://mahacata.dev/provevi/run/v1",
                "predicate": {
                    "run_id": m.get("run_id"), "last_hash": m.get("last_hash"), "status": m.get("status"),
                    "agent": c.get("agent"), "agent_version": c.get("agent_version"),
                    "signing_key": c.get("signing_key"),
                    "inputs": [{"name": e["data"].get("name"), "uri": (e["refs"] or [None])[0],
                                "sha256": e["data"].get("sha256")} for n, e in events if e["type"] == "input_staged"],
                },
            }
            matched = jcs(statement).encode("utf-8") == body
            if not matched:
                problem("attestation.statement", "attestation.dsse.json", "another statement")
        if isinstance(recorded_key, str) and recorded_key not in [k for k, _ in sigs]:
            problem("attestation.key_absent", "attestation.dsse.json", "no signature by the recorded key")
        if trusted and matched:
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
            with open(trusted) as f:
                kd = json.load(f)
            pub = Ed25519PublicKey.from_public_bytes(bytes.fromhex(kd["keyval"]["public"]))
            ptype = env["payloadType"].encode("utf-8")
            pae = b"DSSEv1 %d %s %d %s" % (len(ptype), ptype, len(body), body)
            ok = False
            for keyid, sig in sigs:
                if keyid not in ("", kd["keyid"]):
                    continue
                try:
                    pub.verify(sig, pae)
                    ok = True
                except Exception:
                    pass
            if not ok:
                problem("attestation.untrusted", "attestation.dsse.json", "no valid signature by a trusted key")
    return problems


if __name__ == "__main__":
    print(json.dumps(verify(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)))
