/**
 * A run's writer with `prove serve`: it opens its run with the daemon (with the daemon's secret, from the
 * connection file), hands its program the run's traces address and ingest key, and at the end seals the run with
 * the daemon (with its writer key) and appends what the daemon took to its own chain. The same shape as
 * `receiver()`, so that a program backend uses either.
 * @module
 */
import { createHash } from "node:crypto";
import { ProveviError } from "../evidence/errors.ts";
import { problemData } from "../telemetry/telemetry_events.ts";
import type { DaemonConnection } from "./daemon_file.ts";
import type { RunReceiver } from "./run_receiver.ts";
import type { OpenedRun, SealedSpans } from "./span_daemon.ts";
import { RECEIVER_COMPONENT } from "./span_events.ts";
import type { ReceiverRun } from "./span_intake.ts";

/** The event types a daemon may hand back. */
const HANDED_BACK = new Set(["span_recorded", "telemetry_problem"]);

function bytesOf64(b64: string): Uint8Array {
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

/**
 * Appends what a daemon handed back at a run's seal to the run's chain: stores the payloads, then writes the
 * events in the order the daemon took them. It takes only what a span receiver writes (`span_recorded` and
 * `telemetry_problem` events of the `SpanReceiver` component, payloads under their own SHA-256), so that a
 * daemon cannot put anything else in the chain.
 *
 * @param run The run's recorder (`record`, `payload`).
 * @param sealed The seal's answer.
 * @returns The number of events written.
 * @throws ProveviError when the answer holds anything else; nothing is written then.
 * @example
 * ```ts
 * import { appendSealedSpans } from "./daemon_client.ts";
 * import type { ReceiverRun } from "./span_intake.ts";
 * declare const recorder: ReceiverRun;
 * await appendSealedSpans(recorder, { run_id: "run-x", spans: 0, refused: 0, events: [], payloads: {} }); // 0
 * ```
 */
export async function appendSealedSpans(
  run: Pick<ReceiverRun, "record" | "recordMany" | "payload">,
  sealed: SealedSpans,
): Promise<number> {
  const payloads = new Map<string, Uint8Array>();
  for (const [sha, b64] of Object.entries(sealed?.payloads ?? {})) {
    const bytes = typeof b64 === "string" ? bytesOf64(b64) : null;
    if (bytes === null || createHash("sha256").update(bytes).digest("hex") !== sha) {
      throw new ProveviError(
        `the daemon's answer holds a payload ${sha.slice(0, 80)} whose bytes do not match it`,
      );
    }
    payloads.set(sha, bytes);
  }
  const events = Array.isArray(sealed?.events) ? sealed.events : [];
  for (const e of events) {
    if (!HANDED_BACK.has(e?.type) || e.component !== RECEIVER_COMPONENT) {
      throw new ProveviError(
        `the daemon's answer holds a ${String(e?.type).slice(0, 80)} event of ${
          String(e?.component).slice(0, 80)
        }; ` +
          `a span daemon hands back only span_recorded and telemetry_problem events of ${RECEIVER_COMPONENT}`,
      );
    }
    if (e.payload != null && !payloads.has(e.payload)) {
      throw new ProveviError(
        `the daemon's answer names a payload ${String(e.payload).slice(0, 80)} it does not hold`,
      );
    }
  }
  for (const bytes of payloads.values()) await run.payload(bytes);
  if (run.recordMany) await run.recordMany(events);
  else for (const init of events) await run.record(init);
  return events.length;
}

async function errorOf(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body?.error === "string") return body.error;
  } catch { /* not JSON */ }
  return `HTTP ${response.status}`;
}

/**
 * Opens a run with a span daemon, as its writer: the answer's receiver gives the program's traces address and
 * headers, and its `close()` seals the run with the daemon and appends the spans it took to the run's chain. A
 * seal the daemon refuses (it was restarted, or let the run go) is written as the run's `telemetry_problem`.
 *
 * @param connection The daemon's address and secret (`readDaemonFile`).
 * @param run The run's recorder.
 * @returns The run's receiver at the daemon.
 * @throws ProveviError when the daemon cannot be reached or refuses to open the run, in one line.
 * @example
 * ```ts
 * import { openWithDaemon } from "./daemon_client.ts";
 * import { readDaemonFile } from "./daemon_file.ts";
 * import type { ReceiverRun } from "./span_intake.ts";
 * declare const recorder: ReceiverRun;
 * await using spans = await openWithDaemon(await readDaemonFile("/home/ada/.local/share/prove/serve-4318.json"), recorder);
 * // the program exports to spans.tracesUrl with spans.headers
 * ```
 */
export async function openWithDaemon(
  connection: DaemonConnection,
  run: ReceiverRun,
): Promise<RunReceiver> {
  let response: Response;
  try {
    response = await fetch(`${connection.url}/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${connection.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ run_id: run.runId }),
    });
  } catch (error) {
    throw new ProveviError(
      `cannot reach prove serve at ${connection.url}: ${
        (error as Error).message.split("\n")[0]
      }; start it, or ` +
        `unset PROVE_SERVE to give the run a receiver of its own`,
      { cause: error },
    );
  }
  if (response.status !== 201) {
    throw new ProveviError(
      `prove serve at ${connection.url} did not open run ${run.runId}: ${await errorOf(response)}`,
    );
  }
  const opened = await response.json() as OpenedRun;
  let spans = 0;
  let refused = 0;
  const seal = async () => {
    try {
      const sealed = await fetch(opened.seal_url, {
        method: "POST",
        headers: { authorization: `Bearer ${opened.writer_key}` },
      });
      if (!sealed.ok) throw new Error(await errorOf(sealed));
      const answer = await sealed.json() as SealedSpans;
      await appendSealedSpans(run, answer);
      spans = answer.spans;
      refused = answer.refused;
    } catch (error) {
      await run.record({
        type: "telemetry_problem",
        component: RECEIVER_COMPONENT,
        data: problemData(
          `prove serve at ${connection.url} did not hand back the run's spans: ` +
            `${(error as Error).message.split("\n")[0]!.slice(0, 400)}`,
        ),
      }).catch(() => {});
    }
  };
  let closed: Promise<void> | null = null;
  const close = () => closed ??= seal();
  const url = new URL(opened.endpoint);
  return {
    url: opened.endpoint,
    tracesUrl: opened.traces_url,
    host: url.host,
    headers: Object.freeze({ authorization: `Bearer ${opened.ingest_key}` }),
    get spans() {
      return spans;
    },
    get refused() {
      return refused;
    },
    strangers: 0,
    close,
    [Symbol.asyncDispose]: close,
  };
}
