/**
 * The evidence format: the event and its canonical line, the hash chain, SHA-256 helpers, the manifest, the
 * run record as the checks read it, the span index beside it and the spans of a run, the file store's assessments
 * file, the runs root, and `verify`/`verifyOutputs`.
 * Imports no other folder of provevi: every other folder builds on this one.
 * @module
 */
export * from "./errors.ts";
export * from "./hash.ts";
export * from "./bytes.ts";
export * from "./event.ts";
export * from "./chain.ts";
export * from "./manifest.ts";
export * from "./record.ts";
export * from "./runs_root.ts";
export * from "./problem_codes.ts";
export * from "./problem.ts";
export * from "./verify.ts";
export * from "./read_events.ts";
export * from "./event_rules.ts";
export * from "./signing_key.ts";
export * from "./attestation.ts";
export * from "./attestation_check.ts";
export * from "./spans_file.ts";
export * from "./run_spans.ts";
export * from "./assessments_file.ts";
export * from "./writer_process.ts";
export * from "./read_text.ts";
export { plainCanonicalText } from "./event_line.ts";
export { packPayload, type PackRecord, readPack, storedPayloads } from "./payload_pack.ts";
