/**
 * The log of all runs: a witnessed Merkle log of a store's sealed runs. RFC 9162 hashing, C2SP tlog-tiles for
 * the tree, C2SP signed notes and tlog-checkpoint for its checkpoints, tlog-cosignature and tlog-witness for
 * witnesses, tlog-proof for a run's offline proof; the leaf of a run, the trust policy, the audit. Imports
 * `evidence/` only: the stores build on it.
 * @module
 */
export * from "./merkle.ts";
export * from "./tiles.ts";
export * from "./tree_edge.ts";
export * from "./note.ts";
export * from "./checkpoint.ts";
export * from "./cosignature.ts";
export * from "./run_leaf.ts";
export * from "./tlog_proof.ts";
export * from "./log_key.ts";
export * from "./trust_policy.ts";
export * from "./log_storage.ts";
export * from "./file_log.ts";
export * from "./rows_log.ts";
export * from "./run_index.ts";
export * from "./log_proofs.ts";
export * from "./witness.ts";
export * from "./witness_server.ts";
export * from "./witness_client.ts";
export * from "./run_in_log.ts";
export * from "./log_audit.ts";
