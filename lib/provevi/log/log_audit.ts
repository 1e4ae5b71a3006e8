/**
 * The audit of a store's log: it replays the whole log from its entries (the tree rebuilt, compared with every
 * tile and the checkpoint's root), checks the checkpoint against a trust policy and a checkpoint seen before,
 * and compares the leaves with the store: every sealed run has one leaf, every leaf names a sealed run that is
 * what the leaf says and that verifies. It reports what is missing, added or changed, as problems.
 * @module
 */
import { type Problem, problem } from "../evidence/problem.ts";
import type { ProblemCode } from "../evidence/problem_codes.ts";
import { parseCheckpoint } from "./checkpoint.ts";
import type { LogStorage } from "./log_storage.ts";
import { proveConsistency, sizeOf } from "./log_proofs.ts";
import { leafHash, sameHash, verifyConsistency } from "./merkle.ts";
import { parseNote } from "./note.ts";
import { parseLeaf, type RunLeaf, sameLeaf } from "./run_leaf.ts";
import { TILE_WIDTH } from "./tiles.ts";
import { appendToEdge, edgeRoot, type TreeEdge } from "./tree_edge.ts";
import { checkCheckpoint, type TrustPolicy } from "./trust_policy.ts";

/** What the audit asks of the store. */
export interface AuditedStore {
  /** The IDs of the store's runs. */
  runIds(): Promise<string[]>;
  /** The leaf a run's seal gives now, or null when the store does not hold it sealed. */
  leafOf(runId: string): Promise<RunLeaf | null>;
  /** The problems of the whole check of a run. */
  verify(runId: string): Promise<Problem[]>;
}

/** The audit's verdict. */
export interface LogAudit {
  ok: boolean;
  problems: Problem[];
  /** The size of the checkpoint audited. */
  size: number;
  /** The sealed runs that have no leaf (which `--repair` appends). */
  missing: string[];
}

/**
 * Audits a store's log.
 *
 * @param log The log.
 * @param store The store's runs.
 * @param options `policy`: check the checkpoint's signatures; `since`: a checkpoint seen before, which the log
 *   must extend; `verify: false` skips each run's whole check.
 * @returns The verdict.
 */
export async function auditLog(
  log: LogStorage,
  store: AuditedStore,
  options: { policy?: TrustPolicy; since?: string; verify?: boolean } = {},
): Promise<LogAudit> {
  const problems: Problem[] = [];
  const push = (code: ProblemCode, message: string) => problems.push(problem(code, message, { file: "log" }));
  const note = await log.checkpoint();
  const size = note === null ? 0 : sizeOf(note);
  if (note !== null && options.policy) {
    const checked = checkCheckpoint(note, options.policy);
    if (!checked.ok) push(checked.refusal.code, checked.refusal.message);
  }
  const leaves = await replay(log, size, note, push);
  if (options.since) await checkSince(log, options.since, note, push);
  const missing = await compareWithStore(store, leaves, push, options.verify !== false);
  return { ok: problems.length === 0, problems, size, missing };
}

/** Reads every entry, rebuilds the tree, and compares its tiles and root with the log's. */
async function replay(
  log: LogStorage,
  size: number,
  note: string | null,
  push: (code: ProblemCode, message: string) => void,
): Promise<(RunLeaf | null)[]> {
  const leaves: (RunLeaf | null)[] = [];
  let edge: TreeEdge = { size: 0, partial: [] };
  for (let bundle = 0; bundle * TILE_WIDTH < size; bundle++) {
    const width = Math.min(TILE_WIDTH, size - bundle * TILE_WIDTH);
    let entries: Uint8Array[];
    try {
      entries = await log.readEntries(bundle, width);
    } catch (error) {
      push("log.entry_unreadable", `entry bundle ${bundle} cannot be read: ${(error as Error).message}`);
      return leaves;
    }
    entries.forEach((e, i) => {
      try {
        leaves.push(parseLeaf(e));
      } catch (error) {
        push("log.entry_unreadable", `leaf ${bundle * TILE_WIDTH + i}: ${(error as Error).message}`);
        leaves.push(null);
      }
    });
    const out = appendToEdge(edge, entries.map(leafHash));
    edge = out.edge;
    const stored = await log.readTiles(out.tiles.map((t) => t.tile)).catch(() => null);
    out.tiles.forEach((t, i) => {
      const s = stored?.[i];
      if (!s || !sameHash(s.subarray(0, t.hashes.length), t.hashes)) {
        push("log.tree_mismatch", `tile ${t.tile.level}/${t.tile.index} is not the one the entries give`);
      }
    });
  }
  if (note !== null && !sameHash(edgeRoot(edge), parseCheckpoint(parseNote(note).text).root)) {
    push(
      "log.tree_mismatch",
      `the entries give another root than the checkpoint's at size ${size}: a leaf was rewritten`,
    );
  }
  return leaves;
}

async function checkSince(
  log: LogStorage,
  since: string,
  note: string | null,
  push: (code: ProblemCode, message: string) => void,
): Promise<void> {
  const old = parseCheckpoint(parseNote(since).text);
  const now = note === null ? null : parseCheckpoint(parseNote(note).text);
  if (now === null || now.size < old.size) {
    push(
      "log.rolled_back",
      `the log has ${now?.size ?? 0} leaves, fewer than the ${old.size} of the checkpoint seen before`,
    );
    return;
  }
  if (now.origin !== old.origin) {
    push(
      "log.rolled_back",
      `the checkpoint seen before is of ${old.origin}, not of this log's ${now.origin}`,
    );
    return;
  }
  try {
    const { proof, newRoot } = await proveConsistency(log, old.size, now.size);
    if (!verifyConsistency(old.size, now.size, proof, old.root, newRoot)) {
      push(
        "log.rolled_back",
        `the log at size ${now.size} does not extend the checkpoint of size ${old.size} seen before`,
      );
    }
  } catch (error) {
    push("log.rolled_back", `no consistency with the checkpoint seen before: ${(error as Error).message}`);
  }
}

async function compareWithStore(
  store: AuditedStore,
  leaves: readonly (RunLeaf | null)[],
  push: (code: ProblemCode, message: string) => void,
  verify: boolean,
): Promise<string[]> {
  const first = new Map<string, number>();
  for (const [index, leaf] of leaves.entries()) {
    if (leaf === null) continue;
    const before = first.get(leaf.run_id);
    if (before !== undefined) {
      push("log.duplicate", `run "${leaf.run_id}" is leaf ${before} and leaf ${index}`);
      continue;
    }
    first.set(leaf.run_id, index);
    const now = await store.leafOf(leaf.run_id).catch(() => null);
    if (now === null) {
      push("log.added", `leaf ${index} names run "${leaf.run_id}", which the store does not hold sealed`);
      continue;
    }
    if (!sameLeaf(now, leaf)) {
      const what = now.manifest_sha256 !== leaf.manifest_sha256
        ? "its manifest"
        : now.last_hash !== leaf.last_hash
        ? "its last hash"
        : "its attestation";
      push(
        "log.changed",
        `run "${leaf.run_id}" (leaf ${index}) was changed since it was logged: ${what} differs`,
      );
      continue;
    }
    if (verify) {
      const found = await store.verify(leaf.run_id);
      if (found.length) {
        push(
          "log.run_fails",
          `run "${leaf.run_id}" (leaf ${index}) does not verify: ${found.map((p) => p.code).join(", ")}`,
        );
      }
    }
  }
  const missing: string[] = [];
  for (const runId of await store.runIds()) {
    if (first.has(runId)) continue;
    if (await store.leafOf(runId).catch(() => null) === null) continue; // not sealed: not yet due in the log
    missing.push(runId);
    push("log.missing", `run "${runId}" is sealed in the store, but the log has no leaf of it`);
  }
  return missing;
}
