/**
 * The spans an agent program sent the run (Claude Code's `claude_code.*`, Codex's), for the viewer's trace: the
 * receiver keeps each request whole as the payload of one `spans_received` event, so the spans are read back from
 * those payloads (hash checked) and placed in the run's trace by their own parents, under the program's
 * `invoke_agent` step whose trace they joined. Below `bodies` a name that is not plain shows as its operation,
 * or `span`. At most {@linkcode MAX_RECEIVED} spans are read, so a run that sent many costs the page no more;
 * and no more bytes of bodies than a reader of the run's rows reads (`RECEIVED_READ_MAX_BYTES`), none over the
 * 16 MiB prove serve takes: events that name a payload of 1 GiB, or one of 16 MiB that holds no span again and
 * again (a program may send the same body many times), cost the page no more either.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";
import { batchSpans } from "../receiver/received_batch.ts";
import { SPANS_RECEIVED } from "../receiver/span_events.ts";
import { BodyBudget } from "../receiver/received_rows.ts";
import type { Level } from "../telemetry/attributes.ts";
import { plainSpanName } from "../telemetry/plain_name.ts";

/** The most received spans the viewer reads of one run. */
export const MAX_RECEIVED = 20_000;

/** A span a program sent, as the trace shows it. */
export interface ReceivedView {
  /** The `spans_received` event that holds it. */
  seq: number;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  /** Microseconds since the epoch. */
  start_us: number;
  end_us: number;
  failed: boolean;
}

/** Microseconds of a time in nanoseconds since the epoch, as OTLP writes it; 0 for one that is not a number. */
function microsOf(nanos: string): number {
  if (!/^[0-9]{1,30}$/.test(nanos)) return 0;
  const micros = Number(BigInt(nanos) / 1000n);
  return Number.isSafeInteger(micros) ? micros : 0;
}

/** A span's name at the viewer's level: below `bodies`, only a plain one, else its operation or `span`. */
function nameAt(name: string, operation: unknown, level: Level): string {
  if (level === "bodies" || plainSpanName(name)) return name;
  return typeof operation === "string" && plainSpanName(operation) ? operation : "span";
}

/**
 * The spans of a run's `spans_received` events, in the order they arrived.
 *
 * @param record The run, whose payloads hold the requests.
 * @param options The run's events and the viewer's level.
 * @returns The spans; a payload that cannot be read or decoded gives none (the check reports it).
 */
export async function receivedOf(
  record: RunRecord,
  options: { events: readonly EvidenceEvent[]; level: Level },
): Promise<ReceivedView[]> {
  const out: ReceivedView[] = [];
  const budget = new BodyBudget();
  for (const e of options.events) {
    if (e.type !== SPANS_RECEIVED || typeof e.payload !== "string") continue;
    if (out.length >= MAX_RECEIVED || budget.spent) break;
    const body = await budget.read(record, e.payload);
    if (body === null) continue;
    let spans;
    try {
      spans = batchSpans(e, body);
    } catch {
      continue;
    }
    for (const s of spans.slice(0, MAX_RECEIVED - out.length)) {
      out.push({
        seq: e.seq,
        trace_id: s.traceId,
        span_id: s.spanId,
        parent_span_id: s.parentSpanId,
        name: nameAt(s.name, s.attributes["gen_ai.operation.name"], options.level),
        start_us: microsOf(s.startTimeUnixNano),
        end_us: microsOf(s.endTimeUnixNano),
        failed: s.status.code === 2,
      });
    }
  }
  return out;
}
