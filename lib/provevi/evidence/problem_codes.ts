/**
 * The registry of problem codes: each stable code a check reports, with its family, the numbered check of
 * docs/evidence-format.md that reports it and its meaning. The entries are kept by kind of check, each in a
 * file of its own (`_verify_codes.ts`, `_part_codes.ts`, `_log_codes.ts`); a test compares the whole with the
 * docs' table, row by row.
 * @module
 */
import { LOG_CODES } from "./_log_codes.ts";
import { PART_CODES } from "./_part_codes.ts";
import { VERIFY_CODES } from "./_verify_codes.ts";

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
  | "order.created_twice"
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
  ...VERIFY_CODES,
  ...PART_CODES,
  ...LOG_CODES,
};

/** A code of the parts' tables that {@linkcode ProblemCode} does not name; `never` while the two agree. */
type Unnamed = Exclude<
  keyof typeof VERIFY_CODES | keyof typeof PART_CODES | keyof typeof LOG_CODES,
  ProblemCode
>;
// A spread is not checked for extra keys: this fails to compile when a table has a code the union lacks.
const _everyCodeNamed: [Unnamed] extends [never] ? true : never = true;
