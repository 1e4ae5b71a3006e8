/**
 * `prove trace TRACE_ID`: the spans of one trace as a tree, each under its parent, with its start, duration,
 * span ID, run and events.
 * @module
 */
import { ProveviError } from "../../lib/provevi/evidence/mod.ts";
import { spanTree, type TraceSpan } from "../../lib/provevi/evidence/mod.ts";
import { trace, traceIdOf } from "../../lib/provevi/store/mod.ts";
import type { Io } from "../_io.ts";
import { jsonText } from "../_json.ts";
import { printColumns, spanDuration } from "../_listing.ts";
import { UsageError } from "../_main.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addTrace({ program, io, withStore }: ProveContext): void {
  program.command("trace")
    .description(
      "Print the spans of a trace as a tree: start, duration, span ID, run and the events on each.",
    )
    .argument("<trace-id>", "the trace ID, 32 hex digits (MLflow's tr-<32 hex> too)")
    .option("--json", "print JSON: the spans, each with its run, parent, times, source and events")
    .action((text: string, opts: { json?: boolean }) =>
      withStore(async (store) => {
        let traceId: string;
        try {
          traceId = traceIdOf(text);
        } catch (error) {
          throw new UsageError((error as Error).message);
        }
        const spans = await trace(store, traceId);
        if (spans.length === 0) {
          throw new ProveviError(
            `no run in store ${store.uri} carries the trace ${traceId}: prove show RUN --json gives a run's trace IDs`,
          );
        }
        if (opts.json) io.out(jsonText({ trace_id: traceId, spans }));
        else printTrace(traceId, spans, io);
      })
    );
}

/** How long after the trace's start a span started: +0ms, +24ms, +1.52s. */
function startText(ms: number): string {
  return ms < 1000 ? `+${Math.round(ms)}ms` : `+${spanDuration(ms)}`;
}

/** The seqs of a span's events: the first few, and how many more. */
function seqsText(seqs: readonly number[]): string {
  if (seqs.length === 0) return "-";
  return seqs.length <= 6 ? seqs.join(",") : `${seqs.slice(0, 5).join(",")},…+${seqs.length - 5}`;
}

/** Prints a trace: a head line, then one line per span in tree order, indented by depth. */
function printTrace(traceId: string, spans: readonly TraceSpan[], io: Io): void {
  const runs = [...new Set(spans.map((s) => s.run_id))];
  const starts = spans.map((s) => s.start_time).filter((t): t is string => t !== null).sort();
  const t0 = starts[0] ? Date.parse(starts[0]) : null;
  io.out(
    `trace ${traceId}: ${spans.length} span${spans.length === 1 ? "" : "s"} in ${
      runs.length === 1 ? `run ${runs[0]}` : `${runs.length} runs`
    }`,
  );
  const rows = [["START", "DURATION", "SPAN", ...(runs.length > 1 ? ["RUN"] : []), "EVENTS", "NAME"]];
  for (const { span, depth } of spanTree(spans)) {
    const start = t0 === null || span.start_time === null
      ? "-"
      : startText(Math.max(0, Date.parse(span.start_time) - t0));
    const error = span.status.code === 2
      ? ` (error${span.status.message ? `: ${span.status.message}` : ""})`
      : "";
    rows.push([
      start,
      span.end_time === null && span.start_time !== null ? "open" : spanDuration(span.duration_ms),
      span.span_id,
      ...(runs.length > 1 ? [span.run_id] : []),
      seqsText(span.seqs),
      `${"  ".repeat(depth)}${span.name}${error}`,
    ]);
  }
  printColumns(rows, io);
}
