/**
 * The driver interface of an evidence store (`EvidenceStore`, `RunWriter`), store URIs, the file store, the
 * questions across runs that an indexed store answers, assessments, and what an indexed store shares: the
 * rows a run implies, their check and their completion from a sealed folder. A store driver of its own
 * (`sqlite/`, `postgres/`) sits beside this folder. Imports `evidence/` and `experiments/` (an agent class's
 * rows).
 * @module
 */
export * from "./store.ts";
export * from "./file_store.ts";
export * from "./store_uri.ts";
export * from "./assess.ts";
export * from "./store_questions.ts";
export * from "./store_rows.ts";
export * from "./row_check.ts";
export * from "./complete_rows.ts";
export * from "./kept_evidence.ts";
export * from "./trace.ts";
export { assessmentsInFolder } from "./file_assessments.ts";
