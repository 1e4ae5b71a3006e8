/**
 * The driver interface of an evidence store (`EvidenceStore`, `RunWriter`), store URIs, the file store, the
 * questions across runs that an indexed store answers, and assessments. A store driver of its own (`sqlite/`,
 * later `postgres/`) sits beside this folder. Imports `evidence/` only.
 * @module
 */
export * from "./store.ts";
export * from "./file_store.ts";
export * from "./store_uri.ts";
export * from "./assess.ts";
export * from "./store_questions.ts";
