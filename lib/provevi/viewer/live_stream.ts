/**
 * The live feed of a running run as the page receives it: server-sent events of its events (each cut to the
 * page, as the run page cuts them) and, at `bodies`, the pieces of the model's answer as they stream.
 * @module
 */
import { readEventsText } from "../evidence/read_events.ts";
import type { RunRecord } from "../evidence/record.ts";
import { feedStatus } from "../live/feed.ts";
import type { EvidenceStore } from "../store/store.ts";
import type { Level } from "../telemetry/attributes.ts";
import type { TelemetryPolicy } from "../telemetry/policy.ts";
import { liveTail } from "./live_tail.ts";
import { runModel } from "./run_model.ts";
import { SECURITY_HEADERS } from "./viewer_http.ts";

/** Whether the run still runs, its status, and the viewer's level for it. */
async function liveState(
  store: EvidenceStore,
  record: RunRecord,
  policy: TelemetryPolicy,
): Promise<{ running: boolean; status: string; level: Level | null }> {
  if ((await record.manifestText().catch(() => null)) !== null) {
    const events = readEventsText((await record.eventsText().catch(() => null)) ?? "").events;
    return { running: false, status: feedStatus(events.at(-1)) ?? "cut", level: null };
  }
  const model = await runModel(store, record, { policy });
  return { running: model.running, status: model.ended ?? "running", level: model.level };
}

/**
 * Server-sent events of a running run: `event`, `text` and `end`; a run that has ended gives `end` at once,
 * without checking it again (the page that follows it reloads the run, which is checked then).
 *
 * @param store The store.
 * @param record The run.
 * @param options The viewer's policy, and the seq after which to start.
 * @returns The stream's response.
 */
export async function liveStream(
  store: EvidenceStore,
  record: RunRecord,
  options: { policy: TelemetryPolicy; after: number },
): Promise<Response> {
  const { after } = options;
  const view = await liveState(store, record, options.policy).catch(() => null);
  const encoder = new TextEncoder();
  // Stopped when the page goes away (the stream is cancelled), not by the request's signal, which Deno also
  // aborts when a response is delivered.
  const stop = new AbortController();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (event: string, data: unknown) => {
        try {
          controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
        } catch {
          stop.abort();
        }
      };
      const beat = setInterval(() => {
        try {
          controller.enqueue(encoder.encode(": still here\n\n"));
        } catch {
          stop.abort();
        }
      }, 15000);
      try {
        if (view === null || !view.running) send("end", { status: view?.status ?? "unknown" });
        else {
          for await (const item of liveTail(record, { level: view.level, after, signal: stop.signal })) {
            if (item.kind === "event") send("event", item.event);
            else if (item.kind === "text") send("text", { text: item.text });
            else send("end", { status: item.status });
          }
        }
      } catch (error) {
        send("problem", { error: (error as Error).message });
      } finally {
        clearInterval(beat);
        try {
          controller.close();
        } catch { /* the page went away */ }
      }
    },
    cancel() {
      stop.abort();
    },
  });
  return new Response(body, {
    headers: { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8" },
  });
}
