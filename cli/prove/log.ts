/**
 * `prove log`: the store's log of its sealed runs. `key` prints the log's verifier key; `proof RUN` a run's
 * inclusion proof (C2SP tlog-proof); `consistency OLD NEW` the proof between two sizes; `audit` replays the log
 * against the store; `cosign URL…` asks witnesses to cosign the latest checkpoint; `wait RUN` waits until the run
 * is in a checkpoint the policy accepts and writes its proof.
 * @module
 */
import { Buffer } from "node:buffer";
import type { Command } from "commander";
import { auditStoreLog, resolveRunRef, runProof, waitForRun } from "../../lib/provevi/runs/mod.ts";
import { cosignLatest, parseCheckpoint, parseNote, proveConsistency } from "../../lib/provevi/log/mod.ts";
import { repairStoreLog, storeLog } from "../../lib/provevi/runs/mod.ts";
import { UnreadableFile } from "../../lib/provevi/evidence/mod.ts";
import { jsonText } from "../_json.ts";
import { argumentFile } from "../_argument_file.ts";
import { type LogPolicyFlags, logPolicyOf, vkeyArgument } from "../_log_policy.ts";
import { witnessVerifier } from "../../lib/provevi/log/trust_policy.ts";
import { UsageError } from "../_main.ts";
import type { ProveContext } from "./_context.ts";

const b64 = (h: Uint8Array) => Buffer.from(h).toString("base64");
/** A run as every other prove command takes it (a bare `latest` was looked up in the log as a run ID). */
const RUN_HELP = "a run ID, latest, or the start of a run ID";

/** Adds the command to `prove`. */
export function addLog(context: ProveContext): void {
  const log = context.program.command("log").description(
    "The log of the store's sealed runs: its key, proofs, audit and witnesses (docs/log.md).",
  );
  addKey(log, context);
  addProof(log, context);
  addConsistency(log, context);
  addAudit(log, context);
  addCosign(log, context);
  addWait(log, context);
}

function policyOptions(command: Command): Command {
  return command
    .option(
      "--log-key <vkey...>",
      "the log's verifier key (or a file of it): the checkpoint must be signed by it",
    )
    .option("--witness <vkey...>", "a witness whose cosignature counts (a verifier key, or a file of one)")
    .option("--quorum <n>", "how many of the witnesses must have cosigned (default: all given)");
}

function addKey(log: Command, { io, withStore }: ProveContext): void {
  log.command("key")
    .description("Print the log's verifier key and origin (the key is made at the first seal, or now).")
    .option("--json", "print JSON")
    .action((opts: { json?: boolean }) =>
      withStore(async (store) => {
        const key = (await storeLog(store).key({ create: true }))!;
        if (opts.json) io.out(jsonText({ origin: key.origin, vkey: key.verifier.vkey }));
        else io.out(key.verifier.vkey);
      }, { write: true })
    );
}

function addProof(log: Command, { io, withStore }: ProveContext): void {
  log.command("proof")
    .description("Print a run's inclusion proof against the log's checkpoint (c2sp.org/tlog-proof@v1).")
    .argument("<run>", RUN_HELP)
    .option("--write", "also write it to the run folder's log.tlog-proof")
    .action((run: string, opts: { write?: boolean }) =>
      withStore(async (store) => {
        const id = await resolveRunRef(store, run);
        io.out((await runProof(store, id, { write: opts.write ?? false })).trimEnd());
      }, { write: opts.write ?? false })
    );
}

/** A size given as a number, or as a checkpoint file (a regular file: a FIFO is refused, not waited on). */
async function sizeArgument(given: string): Promise<number> {
  if (/^(0|[1-9][0-9]*)$/.test(given)) return Number(given);
  let text: string;
  try {
    text = await argumentFile(given, "the checkpoint");
  } catch (error) {
    if (error instanceof UnreadableFile && !(error.cause instanceof Deno.errors.NotFound)) throw error;
    throw new UsageError(`${given} is neither a tree size nor a checkpoint file`);
  }
  try {
    return parseCheckpoint(parseNote(text).text).size;
  } catch {
    throw new UsageError(`${given} is neither a tree size nor a checkpoint file`);
  }
}

function addConsistency(log: Command, { io, withStore }: ProveContext): void {
  log.command("consistency")
    .description("Print the consistency proof between two sizes of the log (numbers, or checkpoint files).")
    .argument("<old>", "the older size, or its checkpoint")
    .argument("<new>", "the newer size, or its checkpoint")
    .option("--json", "print JSON")
    .action((oldGiven: string, newGiven: string, opts: { json?: boolean }) =>
      withStore(async (store) => {
        const [o, n] = [await sizeArgument(oldGiven), await sizeArgument(newGiven)];
        const c = await proveConsistency(storeLog(store), o, n);
        if (opts.json) {
          io.out(jsonText({
            old: { size: o, root: b64(c.oldRoot) },
            new: { size: n, root: b64(c.newRoot) },
            proof: c.proof.map(b64),
          }));
        } else for (const h of c.proof) io.out(b64(h));
      })
    );
}

function addAudit(log: Command, { io, result, withStore }: ProveContext): void {
  policyOptions(log.command("audit"))
    .description("Replay the whole log and compare it with the store: what is missing, added or changed.")
    .option("--since <checkpoint>", "a checkpoint seen before, which the log must extend")
    .option("--repair", "append the sealed runs the log lacks, each one that verifies")
    .option("--json", "print JSON")
    .action((opts: LogPolicyFlags & { since?: string; repair?: boolean; json?: boolean }) =>
      withStore(async (store) => {
        const policy = await logPolicyOf(opts);
        const since = opts.since === undefined ? undefined : await argumentFile(opts.since, "the checkpoint");
        const audit = await auditStoreLog(store, {
          ...(policy ? { policy } : {}),
          ...(since ? { since } : {}),
        });
        const repaired = opts.repair && audit.missing.length
          ? await repairStoreLog(store, audit.missing)
          : null;
        if (opts.json) io.out(jsonText({ ...audit, ...(repaired ? { repaired } : {}) }));
        else {
          const runs = `the log of ${audit.size} run${audit.size === 1 ? "" : "s"}`;
          const n = audit.problems.length;
          io.out(
            audit.ok
              ? `${runs} agrees with the store`
              : `${runs} does not agree with the store (${n} problem${n === 1 ? "" : "s"})`,
          );
          for (const p of audit.problems) io.out(`  ${p.code}: ${p.message}`);
          for (const r of repaired?.appended ?? []) io.out(`  repaired: appended ${r}`);
        }
        result.code = audit.ok ? 0 : 1;
      }, { write: opts.repair ?? false })
    );
}

function addCosign(log: Command, { io, result, withStore }: ProveContext): void {
  log.command("cosign")
    .description(
      "Ask witnesses (their URLs) to cosign the log's latest checkpoint, and keep their cosignatures.",
    )
    .argument("<url...>", "each witness's URL, such as http://127.0.0.1:8123")
    .option(
      "--witness <vkey...>",
      "a witness's verifier key (or a file of one): a cosignature in its name is kept only when it verifies",
    )
    .option("--json", "print JSON")
    .action((urls: string[], opts: { json?: boolean; witness?: string[] }) =>
      withStore(async (store) => {
        // the keys checked before a line is written into the witnessed checkpoint, which every proof then carries
        const witnesses = [];
        for (const k of opts.witness ?? []) witnesses.push(witnessVerifier(await vkeyArgument(k)));
        const { note, replies } = await cosignLatest(storeLog(store), urls, { witnesses });
        if (opts.json) io.out(jsonText({ checkpoint: note, replies }));
        else {for (const r of replies) {
            io.out(`${r.url}: ${r.status} ${r.status === 200 ? "cosigned" : r.text}`);
          }}
        result.code = replies.every((r) => r.status === 200) ? 0 : 1;
      }, { write: true })
    );
}

function addWait(log: Command, { io, withStore }: ProveContext): void {
  policyOptions(log.command("wait"))
    .description("Wait until a run is in a checkpoint the policy accepts; write and print its proof.")
    .argument("<run>", RUN_HELP)
    .option("--witness-url <url...>", "witnesses to ask for cosignatures while waiting")
    .option("--timeout <seconds>", "how long to wait (default 60)")
    .action((run: string, opts: LogPolicyFlags & { witnessUrl?: string[]; timeout?: string }) =>
      withStore(async (store) => {
        const policy = await logPolicyOf(opts);
        const timeout = opts.timeout === undefined ? 60 : Number(opts.timeout);
        if (!(timeout > 0)) {
          throw new UsageError(`--timeout ${opts.timeout} is not a number of seconds above 0`);
        }
        const text = await waitForRun(store, await resolveRunRef(store, run), {
          ...(policy ? { policy } : {}),
          ...(opts.witnessUrl ? { witnesses: opts.witnessUrl } : {}),
          timeoutMs: timeout * 1000,
        });
        io.out(text.trimEnd());
      }, { write: true })
    );
}
