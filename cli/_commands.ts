/**
 * The command bodies that `prove` and `provr` share: `show` and `verify` print the same in both.
 * @module
 */
import {
  EvidenceReadError,
  type EvidenceStore,
  findRun,
  readEventsText,
  type RunCheck,
  type RunRecord,
  verifyRun,
  type VerifyRunOptions,
} from "../lib/provevi/mod.ts";
import type { Io } from "./_io.ts";

/** Prints the events of a run, one line each, or as JSON. */
export async function showRun(record: RunRecord, io: Io, options: { json?: boolean } = {}): Promise<void> {
  const text = await record.eventsText().catch((error) => {
    throw new EvidenceReadError(`cannot read the events of run "${record.runId}": ${error.message}`, {
      cause: error,
    });
  });
  if (text === null) throw new EvidenceReadError(`run "${record.runId}" has no evidence/events.jsonl`);
  const read = readEventsText(text);
  const broken = read.problems.find((p) => / is not (JSON|an event)/.test(p));
  if (broken) throw new EvidenceReadError(`run "${record.runId}": ${broken}`);
  if (options.json) {
    io.out(JSON.stringify({ run_id: record.runId, events: read.events }, null, 2));
    return;
  }
  for (const e of read.events) {
    const payload = e.payload ? ` payload=${e.payload.slice(0, 12)}` : "";
    const columns = [String(e.seq).padStart(4), e.time, e.type.padEnd(24), e.component.padEnd(24)];
    if (e.refs.length) columns.push(e.refs.join(" "));
    columns.push(JSON.stringify(e.data) + payload);
    io.out(columns.join(" "));
  }
}

/** Verifies a run and prints the verdict; returns the exit code (0 or 1). */
export async function verifyAndPrint(
  ref: string,
  io: Io,
  options: VerifyRunOptions & { store?: EvidenceStore; runs?: string; json?: boolean },
): Promise<number> {
  const record = await findRun(ref, options);
  const check = await verifyRun(record, options);
  printCheck(check, io, options.json ?? false);
  return check.ok ? 0 : 1;
}

/** Prints a run's check: one verdict line, then each problem indented. */
export function printCheck(check: RunCheck, io: Io, json: boolean): void {
  if (json) {
    io.out(JSON.stringify(check, null, 2));
    return;
  }
  if (check.ok) {
    io.out(
      check.bundle
        ? `${check.runId}: the evidence, the outputs and the committed bundle ${check.bundle} verify`
        : check.unpinnedBundle
        ? `${check.runId}: the evidence and the outputs verify; the bundle ${check.unpinnedBundle} is unpinned (its store has no commits), so it was not compared`
        : `${check.runId}: the evidence and the outputs verify; no committed bundle to compare with`,
    );
    return;
  }
  io.out(
    `${check.runId}: does not verify (${check.problems.length} problem${
      check.problems.length === 1 ? "" : "s"
    })`,
  );
  for (const p of check.problems) io.out(`  ${p}`);
}
