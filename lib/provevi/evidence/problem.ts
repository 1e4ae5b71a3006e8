/**
 * A problem a check found, as data: a stable code from {@linkcode PROBLEM_CODES}, where it is (the file, the
 * line of `events.jsonl` and the event's `seq`), and a message for a person. Code that acts on a verdict reads
 * the code and the place, never the message; docs/evidence-format.md lists every code with its check, so that a
 * verifier in another language agrees problem by problem.
 * @module
 */
import { placeholder } from "./_placeholder.ts";

/** A code's entry: its family, the check of docs/evidence-format.md (null outside its numbered checks) and its meaning. */
export interface CodeInfo {
  /** The check family: which check reports it. */
  family: string;
  /** The number of the check in docs/evidence-format.md ("Verifying a run"), or null for a store's checks. */
  check: number | null;
  /** What the problem means, in one line. */
  meaning: string;
}

/** A stable problem code: a key of {@linkcode PROBLEM_CODES}. */
export type ProblemCode =
  | "events.missing"
  | "events.unreadable"
  | "events.empty"
  | "events.cut"
  | "evidence.extra"
  | "line.not_utf8"
  | "line.not_json"
  | "line.too_deep"
  | "line.not_event"
  | "line.lone_surrogate"
  | "line.not_canonical"
  | "line.unknown_type"
  | "line.payload_key"
  | "line.output_data"
  | "line.input_data"
  | "line.created_data"
  | "seq.out_of_order"
  | "chain.broken"
  | "run.id_mismatch"
  | "order.first_not_created"
  | "order.ends_twice"
  | "order.after_end"
  | "manifest.missing"
  | "manifest.unreadable"
  | "manifest.not_json"
  | "manifest.not_object"
  | "manifest.not_canonical"
  | "manifest.unknown_field"
  | "manifest.missing_field"
  | "manifest.format"
  | "manifest.run_id"
  | "manifest.count"
  | "manifest.last_hash"
  | "manifest.status"
  | "manifest.sealed_at"
  | "manifest.lost"
  | "manifest.payload_entry"
  | "manifest.payload_twice"
  | "manifest.payload_order"
  | "manifest.payload_bytes"
  | "payloads.unreadable"
  | "payload.unlisted"
  | "payload.missing"
  | "payload.stored_twice"
  | "pack.broken"
  | "payload.unreadable"
  | "payload.hash_mismatch"
  | "payload.size"
  | "payload.event_unlisted"
  | "output.unreadable"
  | "output.not_plain"
  | "output.unrecorded"
  | "output.changed"
  | "output.missing"
  | "output.recorded_twice"
  | "input.unstaged"
  | "input.staged_twice"
  | "input.sha256"
  | "input.expected"
  | "input.ok"
  | "input.changed"
  | "bundle.unreadable"
  | "bundle.no_pin"
  | "bundle.other_run"
  | "bundle.no_commit"
  | "bundle.unpinned_versioned"
  | "bundle.missing"
  | "bundle.flag_disagrees"
  | "bundle.required"
  | "bundle.unreachable"
  | "bundle.file_unreadable"
  | "bundle.file_missing"
  | "bundle.file_differs"
  | "bundle.file_extra"
  | "attestation.unreadable"
  | "attestation.missing"
  | "attestation.not_envelope"
  | "attestation.not_canonical"
  | "attestation.payload_type"
  | "attestation.statement"
  | "attestation.key_absent"
  | "attestation.untrusted"
  | "attestation.flag_disagrees"
  | "assessments.unreadable"
  | "assessments.line"
  | "assessments.chain"
  | "assessments.target"
  | "catalog.missing"
  | "catalog.unopenable"
  | "experiment.no_pin"
  | "experiment.bad_pin"
  | "experiment.unreadable"
  | "experiment.hash_mismatch"
  | "replay.not_ended"
  | "rows.schema"
  | "rows.run_missing"
  | "rows.unreadable"
  | "rows.event_differs"
  | "rows.refs_differ"
  | "rows.events_missing"
  | "rows.run_differs"
  | "rows.unsealed"
  | "rows.settings_differ"
  | "rows.assessment_differs"
  | "rows.payload_differs"
  | "rows.bundle_differs"
  | "cost.table_unreadable"
  | "cost.no_table"
  | "cost.call_differs"
  | "cost.total_differs"
  | "policy.syntax"
  | "policy.duplicate_key"
  | "policy.shape"
  | "policy.unknown_key"
  | "policy.version"
  | "policy.host"
  | "policy.destination"
  | "policy.kind"
  | "policy.level"
  | "policy.endpoint"
  | "policy.endpoint_host"
  | "policy.live_twice"
  | "policy.library"
  | "policy.versions"
  | "policy.feeds"
  | "policy.version_unapproved"
  | "policy.section_widens"
  | "policy.section_contradicts"
  | "resume.source_missing"
  | "resume.source_sealed"
  | "resume.source_broken"
  | "resume.setup_differs"
  | "resume.step_missing"
  | "resume.served_unknown"
  | "log.proof_missing"
  | "log.proof_unreadable"
  | "log.checkpoint_unreadable"
  | "log.untrusted"
  | "log.quorum"
  | "log.not_included"
  | "log.missing"
  | "log.added"
  | "log.changed"
  | "log.duplicate"
  | "log.run_fails"
  | "log.entry_unreadable"
  | "log.tree_mismatch"
  | "log.rolled_back";

/**
 * Every problem code, by check family. A code never changes its meaning; a new problem gets a new code, and a
 * row in docs/evidence-format.md (a test compares the two).
 */
export const PROBLEM_CODES: Readonly<Record<ProblemCode, CodeInfo>> = {
  "events.missing": { family: "evidence", check: 1, meaning: "evidence/events.jsonl is missing" },
  "events.unreadable": {
    family: "evidence",
    check: 1,
    meaning: "events.jsonl cannot be read: a link, not a plain file, or an error of the store",
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
  "experiment.no_pin": {
    family: "experiment",
    check: null,
    meaning: "run_created names an experiment, but no experiment_pin",
  },
  "experiment.bad_pin": {
    family: "experiment",
    check: null,
    meaning: "the experiment or its pin is not a URI, selects no commit, or is of another experiment",
  },
  "experiment.unreadable": {
    family: "experiment",
    check: null,
    meaning: "experiment.yaml cannot be read at the pin",
  },
  "experiment.hash_mismatch": {
    family: "experiment",
    check: null,
    meaning: "experiment.yaml at the pin does not hash to run_created's experiment_sha256",
  },
  "replay.not_ended": {
    family: "live",
    check: null,
    meaning: "a replay was asked of a run whose last event is not run_completed or run_failed",
  },
  "rows.schema": {
    family: "rows",
    check: null,
    meaning: "an indexed store's schema is not provevi's own",
  },
  "rows.run_missing": {
    family: "rows",
    check: null,
    meaning: "the indexed store holds no row of the run",
  },
  "rows.unreadable": {
    family: "rows",
    check: null,
    meaning: "a file of the run that the row check compares with cannot be read",
  },
  "rows.event_differs": {
    family: "rows",
    check: null,
    meaning:
      "an event row's line or columns differ from its line of events.jsonl, or its chain does not cover it",
  },
  "rows.refs_differ": {
    family: "rows",
    check: null,
    meaning: "an event's URI rows differ from the URIs its line names",
  },
  "rows.events_missing": {
    family: "rows",
    check: null,
    meaning: "lines of events.jsonl have no event row",
  },
  "rows.run_differs": {
    family: "rows",
    check: null,
    meaning: "the run's row differs from its events, manifest or last line",
  },
  "rows.unsealed": {
    family: "rows",
    check: null,
    meaning: "the run whose rows are checked has no manifest",
  },
  "rows.settings_differ": {
    family: "rows",
    check: null,
    meaning: "the rows of the run's settings, agent or experiment differ from its run_created",
  },
  "rows.assessment_differs": {
    family: "rows",
    check: null,
    meaning: "an assessment row judges an event or span the run lacks, or its value is not JSON",
  },
  "rows.payload_differs": {
    family: "rows",
    check: null,
    meaning: "a payload row differs from its file or pack record, or a stored payload has no row",
  },
  "rows.bundle_differs": {
    family: "rows",
    check: null,
    meaning: "the bundle the run's row records differs from bundle.json",
  },
  "cost.table_unreadable": {
    family: "cost",
    check: null,
    meaning: "the price table that run_created pins cannot be read as a price table",
  },
  "cost.no_table": {
    family: "cost",
    check: null,
    meaning: "an event records a cost, but run_created pins no price table",
  },
  "cost.call_differs": {
    family: "cost",
    check: null,
    meaning: "a model call's recorded cost is not its usage priced by the pinned table",
  },
  "cost.total_differs": {
    family: "cost",
    check: null,
    meaning: "the run's recorded cost total is not the sum of its model calls, recomputed",
  },
  "policy.syntax": {
    family: "policy",
    check: null,
    meaning: "the policy file is not YAML or JSON, or its aliases expand too far",
  },
  "policy.duplicate_key": { family: "policy", check: null, meaning: "a key is named twice in one mapping" },
  "policy.shape": {
    family: "policy",
    check: null,
    meaning:
      "a part is not of its type: the policy, destinations or libraries not a mapping, a list not a list",
  },
  "policy.unknown_key": {
    family: "policy",
    check: null,
    meaning: "a key that the policy's format, or a run file's telemetry section, does not name",
  },
  "policy.version": { family: "policy", check: null, meaning: "version is missing, or is not the integer 1" },
  "policy.host": {
    family: "policy",
    check: null,
    meaning: "a hosts entry is not a text, not a host, too wide, or named twice",
  },
  "policy.destination": {
    family: "policy",
    check: null,
    meaning: "a destination's name is not plain, or two destinations have one kind and endpoint",
  },
  "policy.kind": {
    family: "policy",
    check: null,
    meaning: "a destination's kind is not logfire, otlp, mlflow or live",
  },
  "policy.level": { family: "policy", check: null, meaning: "a receives is not names, usage or bodies" },
  "policy.endpoint": {
    family: "policy",
    check: null,
    meaning:
      "an endpoint is missing, not a URL its kind takes, names a user or password, or reads as two places",
  },
  "policy.endpoint_host": { family: "policy", check: null, meaning: "an endpoint's host is not in hosts" },
  "policy.live_twice": {
    family: "policy",
    check: null,
    meaning: "the policy names more than one live viewer",
  },
  "policy.library": { family: "policy", check: null, meaning: "a library's name is not an npm package name" },
  "policy.versions": {
    family: "policy",
    check: null,
    meaning: "a library's versions is missing or is not a version range",
  },
  "policy.feeds": {
    family: "policy",
    check: null,
    meaning: "a library's telemetry names no destination of the policy, a live viewer, or one twice",
  },
  "policy.version_unapproved": {
    family: "policy",
    check: null,
    meaning: "an approved library is installed at a version that its versions do not hold",
  },
  "policy.section_widens": {
    family: "policy",
    check: null,
    meaning:
      "a run file's telemetry section adds a host, destination or library, raises a level, or changes a kind, endpoint or versions",
  },
  "policy.section_contradicts": {
    family: "policy",
    check: null,
    meaning: "a run file's telemetry section names a destination that it drops, or whose host it cuts",
  },
  "resume.source_missing": {
    family: "resume",
    check: null,
    meaning: "the cut run that run_created's resumed_from names is not in the store",
  },
  "resume.source_sealed": {
    family: "resume",
    check: null,
    meaning: "the run resumed as cut has a manifest: it was sealed",
  },
  "resume.source_broken": {
    family: "resume",
    check: null,
    meaning: "the cut run's events, to its last whole line, do not hold (a chain, a line)",
  },
  "resume.setup_differs": {
    family: "resume",
    check: null,
    meaning: "the run file, the staged inputs or the rendered prompt differ from the cut run's",
  },
  "resume.step_missing": {
    family: "resume",
    check: null,
    meaning: "a model call or a tool call of the cut run is not served in its place in the resumed run",
  },
  "resume.served_unknown": {
    family: "resume",
    check: null,
    meaning: "an event's served_from names an event of the cut run that does not record it so",
  },
  "log.proof_missing": {
    family: "log",
    check: 10,
    meaning: "with --log-key: the run folder has no log.tlog-proof",
  },
  "log.proof_unreadable": {
    family: "log",
    check: 10,
    meaning: "log.tlog-proof is a link, not a plain file, or not a c2sp.org/tlog-proof@v1",
  },
  "log.checkpoint_unreadable": {
    family: "log",
    check: 10,
    meaning: "the proof's checkpoint is not a signed note of a checkpoint",
  },
  "log.untrusted": {
    family: "log",
    check: 10,
    meaning:
      "the checkpoint is not signed by a trusted log key for its origin, or a trusted key's signature fails",
  },
  "log.quorum": {
    family: "log",
    check: 10,
    meaning: "fewer trusted witnesses cosigned the checkpoint than the quorum",
  },
  "log.not_included": {
    family: "log",
    check: 10,
    meaning: "the inclusion proof does not bind the run's leaf at its index to the checkpoint's root",
  },
  "log.missing": {
    family: "log",
    check: null,
    meaning: "audit: a sealed run of the store has no leaf in the log",
  },
  "log.added": {
    family: "log",
    check: null,
    meaning: "audit: a leaf names a run that the store does not hold sealed",
  },
  "log.changed": {
    family: "log",
    check: null,
    meaning: "audit: a leaf's run is not the one the leaf says (manifest, last hash or attestation)",
  },
  "log.duplicate": {
    family: "log",
    check: null,
    meaning: "audit: a run has more than one leaf",
  },
  "log.run_fails": {
    family: "log",
    check: null,
    meaning: "audit: a leaf's run does not verify",
  },
  "log.entry_unreadable": {
    family: "log",
    check: null,
    meaning: "audit: an entry bundle or a tile cannot be read, or an entry is not a run's leaf",
  },
  "log.tree_mismatch": {
    family: "log",
    check: null,
    meaning: "audit: the entries or tiles do not give the checkpoint's root",
  },
  "log.rolled_back": {
    family: "log",
    check: null,
    meaning: "audit: the checkpoint is not consistent with one seen before (smaller, or another tree)",
  },
};

/** Where a problem is: the file (relative to `evidence/`, or `output/…`, `bundle.json`), line and seq. */
export interface ProblemWhere {
  /** `events.jsonl`, `manifest.json`, `payloads/<sha256>`, `attestation.dsse.json`, `output/<path>`, … */
  file?: string | null;
  /** The line of the file it names (`events.jsonl`, `assessments.jsonl`), from 1. */
  line?: number | null;
  /** The `seq` of the event on that line, when it can be read. */
  seq?: number | null;
}

/** A problem a check found: its code, where it is, and a message for a person. */
export interface Problem {
  /** The stable code ({@linkcode PROBLEM_CODES}); what code acts on. */
  readonly code: ProblemCode;
  /** The file it names, or null. */
  readonly file: string | null;
  /** The line of the file it names (`events.jsonl`, `assessments.jsonl`), from 1, or null. */
  readonly line: number | null;
  /** The `seq` of the event on that line, or null when none can be read. */
  readonly seq: number | null;
  /** One line for a person; never read by code. */
  readonly message: string;
}

/**
 * Makes a problem: the one constructor, so that every problem has a known code and a message of one line.
 *
 * @param code The problem's code.
 * @param message What is wrong, for a person.
 * @param where The file, line and seq it names.
 * @returns The problem.
 * @throws RangeError for a code that is not in {@linkcode PROBLEM_CODES}.
 * @example
 * ```ts
 * import { problem } from "./problem.ts";
 * const p = problem("line.not_json", "events.jsonl line 2 is not JSON", { file: "events.jsonl", line: 2 });
 * p.code; // "line.not_json"
 * ```
 */
export function problem(code: ProblemCode, message: string, where: ProblemWhere = {}): Problem {
  if (!Object.hasOwn(PROBLEM_CODES, code)) {
    throw new RangeError(`unknown problem code ${JSON.stringify(code)}`);
  }
  return {
    code,
    file: where.file ?? null,
    line: where.line ?? null,
    seq: where.seq ?? null,
    // One line, whatever a message quotes from the files; the test switch proves no code reads it.
    message: placeholder.on ? `(${code})` : message.replace(/\s*\n\s*/g, " "),
  };
}

/**
 * Where an event is, for a problem: `events.jsonl`, its line and its seq.
 *
 * @param line The line, from 1.
 * @param seq The event's seq, or null when it cannot be read.
 * @returns The place.
 */
export function atLine(line: number, seq: number | null = null): Required<ProblemWhere> {
  return { file: "events.jsonl", line, seq };
}

/**
 * True when a list of problems holds one of these codes.
 *
 * @param problems The problems.
 * @param codes The codes to look for.
 * @returns Whether any problem has one of them.
 * @example
 * ```ts
 * import { hasCode, problem } from "./problem.ts";
 * hasCode([problem("events.cut", "cut")], "events.cut"); // true
 * ```
 */
export function hasCode(problems: readonly Problem[], ...codes: ProblemCode[]): boolean {
  return problems.some((p) => codes.includes(p.code));
}
