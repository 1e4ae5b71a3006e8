/**
 * The problem codes of the log of all runs: `verify`'s check 10 (a run's log.tlog-proof against trusted keys
 * and witnesses) and the audit of a store against its log. One part of `PROBLEM_CODES`
 * (problem_codes.ts), in the order of docs/evidence-format.md.
 * @module
 */

/** The codes of the log's check and its audit, in the docs' order. */
export const LOG_CODES = {
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
