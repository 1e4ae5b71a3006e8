/**
 * The command bodies that `prove` and `provr` share: `show` and `verify` print the same in both.
 * @module
 */
import type { Command } from "commander";
import type {
  EvidenceEvent,
  EvidenceStore,
  RunCheck,
  RunRecord,
  TelemetryPolicy,
  VerifyRunOptions,
} from "../lib/provevi/mod.ts";
import { EvidenceReadError, ProveviError, readTrustedKey } from "../lib/provevi/evidence/mod.ts";
import { findRunOrBundle, openStore, verifyRun } from "../lib/provevi/runs/mod.ts";
import { readEventsText, runSpans, spanTree } from "../lib/provevi/evidence/mod.ts";
import { indexedSpans } from "../lib/provevi/store/mod.ts";
import type { TelemetryItem } from "../lib/provevi/telemetry/mod.ts";
import { type CatalogChoice, openCatalog } from "./_catalog.ts";
import { fitted, type Io } from "./_io.ts";
import { jsonText } from "./_json.ts";
import { totalsLine } from "./prove/cost.ts";
import { runCost } from "../lib/provevi/cost/mod.ts";
import { spanDuration } from "./_listing.ts";
import { type LogPolicyFlags, logPolicyOf } from "./_log_policy.ts";

/**
 * Reads the events of a run for a command that prints them.
 * @throws EvidenceReadError (exit 2) when the events cannot be read, or a line is not an event.
 */
export async function readRunEvents(record: RunRecord): Promise<EvidenceEvent[]> {
  const text = await record.eventsText().catch((error) => {
    throw new EvidenceReadError(`cannot read the events of run "${record.runId}": ${error.message}`, {
      cause: error,
    });
  });
  if (text === null) throw new EvidenceReadError(`run "${record.runId}" has no evidence/events.jsonl`);
  const read = readEventsText(text);
  const broken = read.problems.find((p) => p.code === "line.not_json" || p.code === "line.not_event");
  if (broken) throw new EvidenceReadError(`run "${record.runId}": ${broken.message}`);
  return read.events;
}

/**
 * Prints the events of a run, one line each, with its span (its name under its parent, and how long it took), or
 * as JSON with the run's spans. The spans come from the run folder's span index and the events, as `runSpans`
 * joins them: a run shown from a store's rows whose folder is elsewhere has the spans its events make.
 */
export async function showRun(
  record: RunRecord,
  io: Io,
  options: {
    json?: boolean;
    wide?: boolean;
    verdict?: RunCheck | null;
    events?: EvidenceEvent[];
    /** The folder whose span index to read, when it is not the record's. */
    folder?: string | null;
  } = {},
): Promise<void> {
  const events = options.events ?? await readRunEvents(record);
  const folder = options.folder === undefined ? record.folder : options.folder;
  const indexed = await indexedSpans(record, events, folder);
  const tree = spanTree(runSpans(events, indexed));
  if (options.json) {
    const verdict = options.verdict === undefined ? {} : { verdict: options.verdict };
    const spans = tree.map(({ span, depth }) => ({ ...span, depth }));
    io.out(jsonText({ run_id: record.runId, ...verdict, events, spans }));
    return;
  }
  const spanOf = new Map<string, string>();
  for (const { span, depth } of tree) {
    spanOf.set(
      span.span_id,
      `${"  ".repeat(depth)}${span.name} ${
        span.end_time === null && span.start_time !== null ? "open" : spanDuration(span.duration_ms)
      }`,
    );
  }
  const width = Math.max(0, ...[...spanOf.values()].map((s) => s.length));
  for (const e of events) {
    const payload = e.payload ? ` payload=${e.payload.slice(0, 12)}` : "";
    const span = (e.span_id === null ? "-" : spanOf.get(e.span_id) ?? "-").padEnd(width);
    const columns = [String(e.seq).padStart(4), e.time, e.type.padEnd(24), e.component.padEnd(24), span];
    if (e.refs.length) columns.push(e.refs.join(" "));
    columns.push(JSON.stringify(e.data) + payload);
    // On a terminal each event is one line of its width; --wide, a pipe and --json keep the whole line.
    io.out(options.wide ? columns.join(" ") : fitted(columns.join(" "), io.width));
  }
  // The totals, recomputed from the run's own price table and usage (prove cost shows each call).
  const cost = await runCost(events, (sha) => record.payload(sha)).catch(() => null);
  if (cost && cost.calls.length) {
    const line = totalsLine(events, cost);
    io.out(options.wide ? line : fitted(line, io.width));
  }
}

/** Verifies a run and prints the verdict; returns the exit code (0 or 1). */
export async function verifyAndPrint(
  ref: string,
  io: Io,
  options: VerifyRunOptions & { store?: EvidenceStore; runs?: string; json?: boolean },
): Promise<number> {
  // A run of a shared store made on another machine is read from its committed bundle.
  const { record, bundle } = await findRunOrBundle(ref, options);
  const check = await verifyRun(record, bundle && !options.bundle ? { ...options, bundle } : options);
  // A run that lacks only the bundle --require-bundle asks for is refused as the seed's error says, not given
  // a verdict; under --json the verdict is the answer, with the code bundle.required.
  const only = check.problems.length === 1 ? check.problems[0]! : null;
  if (!options.json && only?.code === "bundle.required") throw new ProveviError(only.message);
  printCheck(check, io, options.json ?? false);
  if (!options.json) {
    // The verdict is on the evidence; a run that failed is told beside it, with why.
    const text = await record.eventsText().catch(() => null);
    const last = text === null ? undefined : readEventsText(text).events.at(-1);
    if (last?.type === "run_failed") {
      io.out(`${record.runId}: the run itself failed: ${last.data.error}: ${last.data.message}`);
    }
  }
  return check.ok ? 0 : 1;
}

/** Prints a run's check: one verdict line, then each problem indented. */
export function printCheck(check: RunCheck, io: Io, json: boolean): void {
  if (json) {
    io.out(jsonText(check));
    return;
  }
  if (check.ok) {
    const logged = check.inLog
      ? `, in the log ${check.inLog.origin} as leaf ${check.inLog.index} of ${check.inLog.size}${
        check.inLog.witnesses.length ? ` cosigned by ${check.inLog.witnesses.join(", ")}` : ""
      }`
      : "";
    const signed = (check.signedBy.length ? `, signed by trusted key ${check.signedBy.join(", ")}` : "") +
      logged;
    io.out(
      check.bundle
        ? `${check.runId}: the evidence, the outputs and the committed bundle ${check.bundle} verify${signed}`
        : check.unpinnedBundle
        ? `${check.runId}: the evidence and the outputs verify${signed}; the bundle ${check.unpinnedBundle} is unpinned (its store has no commits), so it was not compared`
        : `${check.runId}: the evidence and the outputs verify${signed}; no committed bundle to compare with`,
    );
    for (const n of check.notes) io.out(`  note: ${n}`);
    return;
  }
  io.out(
    `${check.runId}: does not verify (${check.problems.length} problem${
      check.problems.length === 1 ? "" : "s"
    })`,
  );
  for (const p of check.problems) io.out(`  ${p.message}`);
  for (const n of check.notes) io.out(`  note: ${n}`);
}

/** The lines of `prove policy`: the digest, each library, each destination, the hosts. */
export function policyLines(file: string, policy: TelemetryPolicy): string[] {
  const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const lines = [`${file}: sha256 ${policy.digest()}`];
  for (const l of [...policy.libraries].sort(byName)) {
    lines.push(
      `  library ${l.name} ${l.versions} feeds ${l.telemetry.length ? l.telemetry.join(", ") : "nothing"}`,
    );
  }
  for (const d of [...policy.destinations].sort(byName)) {
    const at = d.endpoint !== null
      ? ` at ${d.endpoint}`
      : d.kind === "mlflow"
      ? " at the store's own file"
      : "";
    lines.push(`  destination ${d.name} (${d.kind}) receives ${d.receives}${at}`);
  }
  lines.push(`  hosts: ${policy.hosts.length ? policy.hosts.join(", ") : "none"}`);
  return lines;
}

/** One line of `prove telemetry`: sequence number, time, then the blocked attempt or the problem. */
export function telemetryLine(item: TelemetryItem): string {
  const head = `${String(item.seq).padStart(4)} ${item.time}`;
  if (item.kind === "problem") {
    return `${head} problem ${item.problem ?? ""}${item.library ? ` (library ${item.library})` : ""}`
      .trimEnd();
  }
  return `${head} blocked ${item.path ?? "-"} ${item.library ?? "-"} ${item.detail ?? ""}`.trimEnd();
}

/** The options that come before a command: the runs root and the store. */
export interface Globals {
  runs?: string;
  store?: string;
}

/**
 * Opens the store that a program's `--store` and `--runs` name around one command, and closes it after.
 *
 * @param program The program whose global options name the store.
 * @returns A function that runs a command body with the store.
 */
export function storeScope(program: Command): <T>(
  fn: (store: EvidenceStore, g: Globals) => Promise<T>,
  options?: { write?: boolean },
) => Promise<T> {
  return async (fn, options = {}) => {
    const g = program.opts<Globals>();
    const store = await openStore(g.store ?? "file", {
      ...(g.runs ? { runs: g.runs } : {}),
      readOnly: !options.write,
    });
    try {
      return await fn(store, g);
    } finally {
      await store.close();
    }
  };
}

/**
 * Adds the `verify` command, which `prove` and `provr` share; only its help texts differ.
 *
 * @param program The program to add it to; its global options name the store.
 * @param options Where to print, where the exit code goes, and the command's help texts.
 * @example
 * ```ts ignore
 * addVerifyCommand(program, { io, result, help: { command: "Check a run.", run: "…", bundle: "…", requireBundle: "…" } });
 * ```
 */
export function addVerifyCommand(
  program: Command,
  options: {
    io: Io;
    result: { code: number };
    help: { command: string; run: string; bundle: string; requireBundle: string };
  },
): void {
  const { io, result, help } = options;
  const withStore = storeScope(program);
  program.command("verify")
    .description(help.command)
    .argument("<run>", help.run)
    .option("--bundle <uri>", help.bundle)
    .option("--require-bundle", help.requireBundle)
    .option("--config <file>", "the catalog config that reads the bundle and the experiment")
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .option("--trust <keyfile...>", "require a valid signature by one of these public keys (prove keygen)")
    .option(
      "--log-key <vkey...>",
      "require the run in a log this key signs (a verifier key, or a file of one)",
    )
    .option("--witness <vkey...>", "a witness whose cosignature counts (a verifier key, or a file of one)")
    .option("--quorum <n>", "how many of the witnesses must have cosigned (default: all given)")
    .option("--json", "print JSON")
    .action((
      run: string,
      opts:
        & { bundle?: string; requireBundle?: boolean; json?: boolean; trust?: string[] }
        & LogPolicyFlags
        & CatalogChoice,
    ) =>
      withStore(async (store) => {
        const trust = await Promise.all((opts.trust ?? []).map((k) => readTrustedKey(k)));
        const log = await logPolicyOf(opts);
        // A --config given is read whether or not the run needs a catalog: a file that is not a catalog
        // config is a mistake to tell now, not when a run with a bundle comes along.
        await using given = opts.config ? await openCatalog(opts) : undefined;
        result.code = await verifyAndPrint(run, io, {
          store,
          ...(trust.length ? { trust } : {}),
          ...(log ? { log } : {}),
          catalog: given ?? (() => openCatalog(opts)),
          ...(opts.bundle ? { bundle: opts.bundle } : {}),
          ...(opts.requireBundle ? { requireBundle: true } : {}),
          ...(opts.json ? { json: true } : {}),
        });
      })
    );
}
