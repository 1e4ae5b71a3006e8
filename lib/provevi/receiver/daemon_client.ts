/**
 * A run's writer with `prove serve`: it opens its run with the daemon (with the daemon's secret, from the
 * connection file), hands its program the run's traces address and ingest key, and at the end seals the run with
 * the daemon (with its writer key) and appends what the daemon took to its own chain: one `spans_received`
 * event a request, its body taken from the run folder where the daemon wrote it as it arrived (while the run goes
 * on, every 3 ms while bodies come and every 50 ms while none do, and the rest at the seal: `received_bodies.ts`). The same shape as `receiver()`, so
 * that a program backend uses either.
 * @module
 */
import { join } from "node:path";
import type { EventInit } from "../evidence/chain.ts";
import { ProveviError } from "../evidence/errors.ts";
import { isUtcTime } from "../evidence/event.ts";
import { isSha256 } from "../evidence/hash.ts";
import { plainName } from "../telemetry/plain_name.ts";
import { problemData } from "../telemetry/telemetry_events.ts";
import type { DaemonConnection } from "./daemon_file.ts";
import { readBytesCapped } from "../guard/body_bytes.ts";
import { RECEIVED_FILE, RECEIVED_JSON_FILE } from "./daemon_run.ts";
import { ReceivedBodies } from "./received_bodies.ts";
import type { RunReceiver } from "./run_receiver.ts";
import type { OpenedRun, SealedSpans } from "./span_daemon.ts";
import { RECEIVER_COMPONENT, SPANS_RECEIVED } from "./span_events.ts";
import type { ReceiverRun } from "./span_intake.ts";

/**
 * How often a writer takes the bodies the daemon wrote for its run, in milliseconds: every 3 while bodies come
 * (a few bodies a take, each stored as a payload: the seal finds few left, and the writer's work comes in
 * small pieces beside its program's requests; at 10 ms the ingest bench's ratio was 0.52-0.55, at 3 ms 0.55-0.61,
 * at 1 ms the takes' own cost showed, 0.44-0.57), every 50 while none do.
 */
const TAKE_SOON_MS = 3;
const TAKE_EVERY_MS = 50;

/** A whole number of at least zero. */
const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/**
 * The event a writer appends for one the daemon handed back, made again from its checked fields only: a
 * `spans_received` of the receiver whose body the run folder holds, or a receiver's problem. Null for anything
 * else.
 */
function handedBack(e: unknown, held: (sha256: string) => boolean): Omit<EventInit, "actor"> | null {
  if (typeof e !== "object" || e === null) return null;
  const { type, component, data, payload, time } = e as Record<string, unknown>;
  if (component !== RECEIVER_COMPONENT || typeof data !== "object" || data === null) return null;
  const d = data as Record<string, unknown>;
  if (type === "telemetry_problem") {
    if (typeof d.problem !== "string" || d.problem === "") return null;
    const problem: Omit<EventInit, "actor"> = {
      type,
      component,
      data: problemData(d.problem.slice(0, 2000)),
    };
    if (isUtcTime(time)) problem.time = time;
    return problem;
  }
  if (type !== SPANS_RECEIVED || !isSha256(payload) || !held(payload)) return null;
  const services = Array.isArray(d.services) ? d.services : null;
  if (
    (d.encoding !== "protobuf" && d.encoding !== "json") || !count(d.spans) || services === null ||
    !services.every((n) => typeof n === "string" && plainName(n)) || !isUtcTime(time)
  ) return null;
  return {
    type,
    component,
    confidence: "parsed",
    time,
    payload,
    data: { encoding: d.encoding, services: services as string[], spans: d.spans },
  };
}

/**
 * Appends what a daemon handed back at a run's seal to the run's chain: for each `spans_received` event, takes
 * the body from the run folder's `received.spans` (unless a take while the run went on stored it), checks its
 * hash and stores it as a payload (one hash a body: the check's); then writes the events in the order the daemon
 * took them, made again from their checked fields.
 * It takes only what a span receiver writes (`spans_received` and `telemetry_problem` events of the
 * `SpanReceiver` component, bodies that hash to what the events name), so that a daemon cannot put anything else
 * in the chain. Then it removes `received.spans`, whose bodies are the run's payloads now.
 * A body an event names that neither file holds, where a file cannot be read or its records stop before its end
 * (bytes that are no record, which the run's program may append), is lost, not its event: the event names no
 * payload, and a `telemetry_problem` says which.
 *
 * @param run The run's recorder (`record`, `recordMany`, `payload`).
 * @param sealed The seal's answer.
 * @param options `folder`: the run folder, where the daemon wrote the bodies; `taken`: the bodies taken from it
 * while the run went on (none by default).
 * @returns The number of events written.
 * @throws ProveviError when the answer holds anything else, or names a body the folder lacks (and no file is
 * broken); nothing is written then.
 * @example
 * ```ts
 * import { appendSealedSpans } from "./daemon_client.ts";
 * import type { ReceiverRun } from "./span_intake.ts";
 * declare const recorder: ReceiverRun;
 * await appendSealedSpans(recorder, { run_id: "run-x", spans: 0, refused: 0, events: [] }, { folder: "/tmp/runs/run-x" }); // 0
 * ```
 */
export async function appendSealedSpans(
  run: Pick<ReceiverRun, "record" | "recordMany" | "payload">,
  sealed: SealedSpans,
  options: { folder: string; taken?: TakenBodies },
): Promise<number> {
  const events: unknown[] = Array.isArray(sealed?.events) ? sealed.events : [];
  const taken = options.taken ?? takenBodies(options.folder);
  const files = [taken.protobuf, taken.json];
  await Promise.all(files.map((f) => f.settle()));
  // a file that cannot be read (a link or FIFO in its place) holds nothing: its bodies' events are refused below
  const unread: string[] = [];
  const rests = files.map((f) => {
    if (!events.length) return new Map<string, Uint8Array>();
    try {
      return restOf(f);
    } catch (error) {
      unread.push((error as Error).message.split("\n")[0]!.slice(0, 400));
      return new Map<string, Uint8Array>();
    }
  });
  const held = (sha256: string) => rests.some((r) => r.has(sha256)) || files.some((f) => f.stored(sha256));
  // a file the writer cannot read, or whose records stop before its end (bytes that are no record, which the
  // run's program may append): the bodies the daemon wrote after are lost, not their events
  const damaged = unread.length > 0 || files.some((f) => f.broken !== null);
  const lost: string[] = [];
  const inits: Omit<EventInit, "actor">[] = [];
  for (const e of events) {
    let init = handedBack(e, held);
    const named = init === null && damaged ? handedBack(e, () => true) : null;
    if (named?.type === SPANS_RECEIVED) {
      lost.push(named.payload!);
      init = { ...named, payload: null };
    }
    if (init === null) {
      const { type, component, payload } = (e ?? {}) as Record<string, unknown>;
      throw new ProveviError(
        type === SPANS_RECEIVED && component === RECEIVER_COMPONENT
          ? `the daemon's answer names a body ${
            String(payload).slice(0, 80)
          } that neither ${RECEIVED_FILE} nor ` +
            `${RECEIVED_JSON_FILE} of the run holds, or a batch of spans that is not one`
          : `the daemon's answer holds a ${String(type).slice(0, 80)} event of ${
            String(component).slice(0, 80)
          }; ` +
            `a span daemon hands back only ${SPANS_RECEIVED} and telemetry_problem events of ${RECEIVER_COMPONENT}`,
      );
    }
    inits.push(init);
  }
  // each body once (a body sent twice is one record, named by two events), with the hash its check made; those
  // taken while the run went on are stored already
  for (const why of unread) {
    inits.push({ type: "telemetry_problem", component: RECEIVER_COMPONENT, data: problemData(why) });
  }
  if (lost.length > 0) inits.push(lostProblem(lost, files));
  const named = new Set(inits.flatMap((i) => i.payload ? [i.payload] : []));
  for (const [i, file] of files.entries()) {
    await file.store(rests[i]!, (bytes) => run.payload(bytes), { only: named });
  }
  const unnamed = files.flatMap((f) => f.storedBut(named));
  if (unnamed.length > 0) inits.push(unnamedProblem(unnamed));
  if (run.recordMany) await run.recordMany(inits);
  else for (const init of inits) await run.record(init);
  for (const file of files) {
    try {
      Deno.removeSync(join(options.folder, file.file));
    } catch { /* gone already */ }
  }
  return inits.length;
}

/**
 * What a run's writer takes from the daemon's files in its folder: the protobuf bodies of `received.spans`,
 * whose rows a reader makes from the payloads when it reads the run's spans (`received_rows.ts`), and the
 * OTLP/JSON bodies of `received-json.spans`, whose rows the daemon wrote.
 */
export interface TakenBodies {
  protobuf: ReceivedBodies;
  json: ReceivedBodies;
}

/**
 * The daemon's files of a run folder, to take from.
 *
 * @param folder The run folder.
 * @returns Nothing taken yet.
 */
export function takenBodies(folder: string): TakenBodies {
  return {
    protobuf: new ReceivedBodies(folder),
    json: new ReceivedBodies(folder, { file: RECEIVED_JSON_FILE }),
  };
}

/** The problem of bodies an event names that neither file holds: their events name no payload. */
function lostProblem(lost: readonly string[], files: readonly ReceivedBodies[]): Omit<EventInit, "actor"> {
  const breaks = files.flatMap((f) => f.broken ? [`${f.file} at byte ${f.broken.at}: ${f.broken.why}`] : []);
  const where = breaks.join("; ") || "a file that cannot be read";
  return {
    type: "telemetry_problem",
    component: RECEIVER_COMPONENT,
    data: problemData(
      `${lost.length} bodies that prove serve's answer names are in neither ${RECEIVED_FILE} nor ` +
        `${RECEIVED_JSON_FILE} (${where}): their spans_received events name no payload: ` +
        lost.slice(0, 3).join(", "),
    ),
  };
}

/**
 * The problem of bodies taken from `received.spans` while the run went on that no event of the daemon's answer
 * names: stored as payloads already, they stay in the run, and the chain says which (a process that wrote
 * records to the file itself, or a daemon that lost its events).
 */
function unnamedProblem(unnamed: readonly string[]): Omit<EventInit, "actor"> {
  const shown = unnamed.slice(0, 8).join(", ") +
    (unnamed.length > 8 ? `, and ${unnamed.length - 8} more` : "");
  return {
    type: "telemetry_problem",
    component: RECEIVER_COMPONENT,
    data: problemData(
      `${unnamed.length} bodies of ${RECEIVED_FILE} or ${RECEIVED_JSON_FILE} are stored as payloads that no ` +
        `spans_received event of ` +
        `prove serve's answer names: ${shown}`,
    ),
  };
}

/** The bodies of `received.spans` not taken yet, read to the end. */
function restOf(taken: ReceivedBodies): Map<string, Uint8Array> {
  try {
    return taken.readRest();
  } catch (error) {
    if (error instanceof ProveviError) throw error;
    throw new ProveviError(
      `cannot read ${join(taken.folder, RECEIVED_FILE)}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/**
 * Takes the bodies the daemon writes while the run goes on: {@linkcode TAKE_SOON_MS} after a take that found
 * some, else {@linkcode TAKE_EVERY_MS} (unreferenced timers). Each take that stored bodies starts their
 * fdatasync, so that the seal's fsync has only the last ones to write.
 *
 * @returns A function that stops the takes.
 */
function takeEvery(taken: TakenBodies, run: ReceiverRun): () => void {
  let flushed = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  const next = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      const store = (bytes: Uint8Array) => run.payload(bytes);
      void Promise.all([taken.protobuf.take(store), taken.json.take(store)]).then(() => {
        const count = taken.protobuf.count + taken.json.count;
        if (count === flushed) return next(TAKE_EVERY_MS);
        flushed = count;
        run.flushPayloads?.();
        next(TAKE_SOON_MS);
      });
    }, ms);
    Deno.unrefTimer(timer);
  };
  next(TAKE_SOON_MS);
  return () => {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
  };
}

/** The most an answer of the daemon may hold: a seal's events, one a request of a run at its limits, and more. */
const ANSWER_MAX_BYTES = 256 * 1024 * 1024;
/** The most an error or an opened run's answer may hold. */
const SMALL_ANSWER_MAX_BYTES = 64 * 1024;
/** How long the writer waits for an answer of the daemon, whole, by default. */
export const DAEMON_ANSWER_MS = 120_000;

/**
 * An answer's body as JSON, read with a cap: the daemon is found through a file, and whatever answers at its
 * address is read no further than an answer of it may go (and within the fetch's time limit).
 */
async function answerJson(response: Response, max: number): Promise<unknown> {
  const bytes = await readBytesCapped(response.body ?? new ReadableStream(), {
    max,
    tooLarge: () => new RangeError(`its answer passed ${max} bytes`),
  });
  return JSON.parse(new TextDecoder().decode(bytes));
}

/**
 * An opened run as the daemon answers it: its addresses the daemon's own (the writer sends its key to the seal's,
 * and hands the traces' to its program), its keys texts.
 */
function openedRun(answer: unknown, base: string): OpenedRun {
  const a = answer as Partial<Record<keyof OpenedRun, unknown>> | null;
  const ours = (url: unknown) => typeof url === "string" && url.startsWith(`${base}/runs/`);
  if (
    typeof a !== "object" || a === null || !ours(a.seal_url) || !ours(a.traces_url) ||
    !ours(`${a.endpoint}/`) ||
    typeof a.ingest_key !== "string" || typeof a.writer_key !== "string" || a.run_id === undefined
  ) throw new TypeError("its answer is not a run's addresses at the daemon and keys");
  return a as OpenedRun;
}

async function errorOf(response: Response): Promise<string> {
  const text = await readBytesCapped(response.body ?? new ReadableStream(), {
    max: SMALL_ANSWER_MAX_BYTES,
    tooLarge: () => new RangeError("too large"),
  }).then((b) => new TextDecoder().decode(b), () => "");
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body?.error === "string") return body.error;
  } catch { /* not JSON */ }
  return `HTTP ${response.status}`;
}

/** `POST /runs` for the run, as its writer: the run's addresses and keys at the daemon. */
async function openRun(connection: DaemonConnection, runId: string, answerMs: number): Promise<OpenedRun> {
  let response: Response;
  try {
    response = await fetch(`${connection.url}/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${connection.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ run_id: runId }),
      signal: AbortSignal.timeout(answerMs), // the headers and the body, whole
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
      `prove serve at ${connection.url} did not open run ${runId}: ${await errorOf(response)}`,
    );
  }
  let opened: OpenedRun;
  try {
    opened = openedRun(await answerJson(response, SMALL_ANSWER_MAX_BYTES), connection.url);
  } catch (error) {
    throw new ProveviError(
      `prove serve at ${connection.url} opened run ${runId} with an answer that cannot be read: ${
        (error as Error).message.split("\n")[0]
      }`,
      { cause: error },
    );
  }
  return opened;
}

/**
 * Opens a run with a span daemon, as its writer: the answer's receiver gives the program's traces address and
 * headers, and its `close()` seals the run with the daemon and appends the spans it took to the run's chain. A
 * seal the daemon refuses (it was restarted, or let the run go) is written as the run's `telemetry_problem`.
 *
 * @param connection The daemon's address and secret (`readDaemonFile`).
 * @param run The run's recorder, and its folder (where the daemon writes the bodies it takes).
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
  run: ReceiverRun & { readonly folder: string },
  options: { answerMs?: number } = {},
): Promise<RunReceiver> {
  const answerMs = options.answerMs ?? DAEMON_ANSWER_MS;
  const opened = await openRun(connection, run.runId, answerMs);
  let spans = 0;
  let refused = 0;
  // the bodies the daemon writes are taken while the run goes on, so that the seal takes only the last ones
  const taken = takenBodies(run.folder);
  const stopTakes = takeEvery(taken, run);
  const seal = async () => {
    stopTakes();
    try {
      const sealed = await fetch(opened.seal_url, {
        method: "POST",
        headers: { authorization: `Bearer ${opened.writer_key}` },
        signal: AbortSignal.timeout(answerMs),
      });
      if (!sealed.ok) throw new Error(await errorOf(sealed));
      const answer = await answerJson(sealed, ANSWER_MAX_BYTES) as SealedSpans;
      await appendSealedSpans(run, answer, { folder: run.folder, taken });
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
      await Promise.all([taken.protobuf.settle(), taken.json.settle()]);
      const unnamed = [...taken.protobuf.storedBut(new Set()), ...taken.json.storedBut(new Set())];
      if (unnamed.length > 0) await run.record(unnamedProblem(unnamed)).catch(() => {});
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
