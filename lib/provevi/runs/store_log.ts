/**
 * A store's log seen with its runs: the audit of the log against the store's runs, the repair that appends
 * sealed runs the log lacks, a run's proof written into its folder, and the wait for a run to be in a checkpoint
 * that a trust policy accepts.
 * @module
 */
import { replaceFile } from "../evidence/replace_file.ts";
import { join } from "node:path";
import { ProveviError, RunNotFound } from "../evidence/errors.ts";
import type { EvidenceStore } from "../store/store.ts";
import { auditLog, type LogAudit } from "../log/log_audit.ts";
import type { LogStorage } from "../log/log_storage.ts";
import { proveRun } from "../log/log_proofs.ts";
import { leafOfSeal, type RunLeaf } from "../log/run_leaf.ts";
import { checkRunInLog, readRunLogFiles } from "../log/run_in_log.ts";
import { PROOF_FILE, tlogProofText } from "../log/tlog_proof.ts";
import type { TrustPolicy } from "../log/trust_policy.ts";
import { cosignLatest } from "../log/witness_client.ts";
import { verifyRun } from "./verify_run.ts";

/**
 * The store's log.
 *
 * @param store The store.
 * @returns Its log.
 * @throws ProveviError when the store keeps none.
 */
export function storeLog(store: EvidenceStore): LogStorage {
  if (!store.log) throw new ProveviError(`store "${store.uri}" keeps no log of its runs`);
  return store.log;
}

/** The leaf that a run of the store gives now, or null when it is not sealed. */
async function leafNow(store: EvidenceStore, runId: string): Promise<RunLeaf | null> {
  const record = await store.readRun(runId);
  const manifest = await record.manifestText().catch(() => null);
  if (manifest === null) return null;
  const { attestation } = record.folder === null
    ? { attestation: null }
    : await readRunLogFiles(record.folder);
  return leafOfSeal(manifest, attestation);
}

/**
 * Audits the store's log against its runs (docs/log.md, "The audit").
 *
 * @param store The store.
 * @param options `policy`: the checkpoint's keys; `since`: a checkpoint seen before; `verify: false` skips the
 *   whole check of each run.
 * @returns The verdict.
 * @example
 * ```ts
 * import { auditStoreLog, FileStore, RunFile, runFile } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const runs = await Deno.makeTempDir();
 * const { runId, folder } = await runFile(RunFile.parse(`
 * run: { org: acme, domain: demo, env: dev }
 * agent: { name: hello, backend: call, model: "test:", script: { model: echo-1, turns: [{ text: Hello. }] } }
 * prompt: Say hello.
 * `), { runs });
 * await using store = new FileStore({ runs });
 * const audit = await auditStoreLog(store);
 * assert.equal(audit.ok, true);
 * assert.deepEqual(audit.missing, []);
 * ```
 */
export async function auditStoreLog(
  store: EvidenceStore,
  options: { policy?: TrustPolicy; since?: string; verify?: boolean } = {},
): Promise<LogAudit> {
  return await auditLog(storeLog(store), {
    runIds: () => store.runIds(),
    leafOf: (runId) => leafNow(store, runId).catch(() => null),
    verify: async (runId) => (await verifyRun(await store.readRun(runId))).problems,
  }, options);
}

/**
 * Appends to the log the sealed runs it lacks, each one only when it verifies.
 *
 * @param store The store.
 * @param runIds The runs (`LogAudit.missing`).
 * @returns The runs appended, and those refused with why.
 */
export async function repairStoreLog(
  store: EvidenceStore,
  runIds: readonly string[],
): Promise<{ appended: string[]; refused: { runId: string; why: string }[] }> {
  const log = storeLog(store);
  const leaves: RunLeaf[] = [];
  const refused: { runId: string; why: string }[] = [];
  for (const runId of runIds) {
    const check = await verifyRun(await store.readRun(runId));
    const leaf = check.ok ? await leafNow(store, runId) : null;
    if (leaf === null || await log.indexOf(runId) !== null) {
      refused.push({
        runId,
        why: check.ok ? "not sealed, or in the log already" : check.problems[0]!.message,
      });
    } else leaves.push(leaf);
  }
  if (leaves.length) await log.append(leaves);
  return { appended: leaves.map((l) => l.run_id), refused };
}

/**
 * A run's proof that it is in the store's log, as `log.tlog-proof` text, written into its folder when asked.
 *
 * @param store The store.
 * @param runId The run.
 * @param options `write`: write it into the run folder.
 * @returns The proof's text.
 * @example
 * ```ts
 * import { FileStore, RunFile, runFile, runProof } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const runs = await Deno.makeTempDir();
 * const { runId, folder } = await runFile(RunFile.parse(`
 * run: { org: acme, domain: demo, env: dev }
 * agent: { name: hello, backend: call, model: "test:", script: { model: echo-1, turns: [{ text: Hello. }] } }
 * prompt: Say hello.
 * `), { runs });
 * await using store = new FileStore({ runs });
 * const proof = await runProof(store, runId, { write: true });
 * assert.equal(await Deno.readTextFile(`${folder}/log.tlog-proof`), proof);
 * ```
 */
export async function runProof(
  store: EvidenceStore,
  runId: string,
  options: { write?: boolean; checkpoint?: string } = {},
): Promise<string> {
  const proof = await proveRun(
    storeLog(store),
    runId,
    options.checkpoint ? { checkpoint: options.checkpoint } : {},
  );
  const text = tlogProofText(proof);
  if (options.write) {
    const record = await store.readRun(runId);
    if (record.folder === null) {
      throw new RunNotFound(`run "${runId}" has no folder here to write its proof in`);
    }
    await replaceFile(join(record.folder, PROOF_FILE), text);
  }
  return text;
}

/**
 * Waits until a run is in the log under a checkpoint that the policy accepts, asking witnesses to cosign while
 * it waits; then writes the run's proof into its folder.
 *
 * @param store The store.
 * @param runId The run.
 * @param options `policy` (without one, any checkpoint of the log covering the run), `witnesses` (their URLs),
 *   `timeoutMs` (60 s), `intervalMs` (250 ms).
 * @returns The proof written.
 * @throws ProveviError when the time runs out, with the last reason.
 * @example
 * ```ts
 * import { FileStore, RunFile, runFile, waitForRun } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const runs = await Deno.makeTempDir();
 * const { runId, folder } = await runFile(RunFile.parse(`
 * run: { org: acme, domain: demo, env: dev }
 * agent: { name: hello, backend: call, model: "test:", script: { model: echo-1, turns: [{ text: Hello. }] } }
 * prompt: Say hello.
 * `), { runs });
 * await using store = new FileStore({ runs });
 * const proof = await waitForRun(store, runId, { timeoutMs: 30_000 });
 * assert.equal(await Deno.readTextFile(`${folder}/log.tlog-proof`), proof);
 * ```
 */
export async function waitForRun(
  store: EvidenceStore,
  runId: string,
  options: { policy?: TrustPolicy; witnesses?: readonly string[]; timeoutMs?: number; intervalMs?: number } =
    {},
): Promise<string> {
  const log = storeLog(store);
  const until = Date.now() + (options.timeoutMs ?? 60_000);
  let why = "";
  for (;;) {
    try {
      if (options.witnesses?.length) {
        // the policy's witness keys: a line in one's name is kept only when it verifies
        await cosignLatest(log, options.witnesses, { witnesses: options.policy?.witnesses ?? [] });
      }
      const text = await runProof(store, runId, { write: true });
      if (!options.policy) return text;
      const record = await store.readRun(runId);
      const manifestText = await record.manifestText();
      const files = record.folder
        ? await readRunLogFiles(record.folder)
        : { attestation: null, proofText: text };
      const checked = checkRunInLog({ runId, manifestText, ...files, proofText: text }, options.policy);
      if (checked.problems.length === 0) return text;
      why = checked.problems[0]!.message;
    } catch (error) {
      if (!(error instanceof ProveviError)) throw error;
      why = error.message;
    }
    if (Date.now() >= until) {
      throw new ProveviError(`run "${runId}" is not in the log as asked after the wait: ${why}`);
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 250));
  }
}
