/**
 * The forwarding of one model call: the request goes to the provider with the real key; a response that does not
 * stream is read whole (cut past the run's limit) and passed back as the provider sent it; a stream passes each
 * chunk to the program as it arrives, while the same bytes are kept and reassembled for the record. A provider
 * that never answers, goes silent mid-stream, drops the connection, sends garbage or too much is cut: the program
 * gets its SDK's kind of error (an error status with the provider's error body, or the API's error event at the
 * end of the stream), and the call is recorded as failed with what arrived. Each call's event is written before
 * the program gets the bytes that end the call (the whole body, or the stream's last event), so that it comes
 * before anything the program does with the answer (a tool call's hook, the next request); every byte before
 * them passes on at once.
 * @module
 */
import { errorMessage } from "../run/recorder.ts";
import type { GatewayCall } from "./gateway_call.ts";
import type { KeyScrubber } from "./key_scrub.ts";
import {
  ERROR_STATUS,
  errorBody,
  type GatewayErrorKind,
  obj,
  parseJson,
  type ProviderApi,
  str,
  streamErrorEvent,
} from "./provider_api.ts";
import { StreamReading } from "./stream_reading.ts";
import { type CallWatch, Silence } from "./call_watch.ts";
import { Answer, tooLarge } from "./provider_answer.ts";

/** Where and how a call is forwarded. */
export interface Upstream {
  /** The provider's URL for this call. */
  url: string;
  /** The headers to send (the real key among them), as pairs. */
  headers: [string, string][];
  /** The request's bytes, as the program sent them. */
  body: Uint8Array<ArrayBuffer>;
  /** The `fetch` to use. */
  fetch: typeof globalThis.fetch;
  /** The largest response body. */
  responseBytes: number;
  /** How long to wait for the response's headers. */
  firstByteMs: number;
  /** How long a stream (or a body) may stay silent. */
  idleMs: number;
  /** The gateway's waits, which end the call when the provider stays silent or the gateway closes. */
  watch: CallWatch;
  /** Takes the real key out of all that comes back (a provider may echo it). */
  scrub: KeyScrubber;
}

/** What the program gets, and when the call's record is written. */
export interface Forwarded {
  response: Response;
  /** Settles once the call's event is written (for a stream, before its last event reaches the program). */
  recorded: Promise<void>;
}

const encoder = new TextEncoder();

/** Response headers that describe the connection or the encoding, which the gateway's own response sets anew. */
const DROPPED = new Set([
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "set-cookie",
]);

/**
 * The provider's headers the program gets, less the connection's and any that holds the key, as pairs, which
 * the response reads once; and the two the gateway reads (a lookup costs about as much as this one pass).
 */
function passedHeaders(
  from: Headers,
  scrub: KeyScrubber,
): { pairs: [string, string][]; length: string | null; type: string } {
  const pairs: [string, string][] = [];
  let length: string | null = null;
  let type = "";
  from.forEach((value, name) => {
    if (name === "content-length") length = value;
    else if (name === "content-type") type = value;
    if (!DROPPED.has(name) && !scrub.holds(value)) pairs.push([name, value]);
  });
  return { pairs, length, type };
}

/**
 * The error response the program gets from the gateway itself.
 *
 * @param api The API the program called.
 * @param kind The kind of error.
 * @param message What happened and what to do.
 * @returns The response.
 */
export function gatewayError(
  api: Pick<ProviderApi, "family">,
  kind: GatewayErrorKind,
  message: string,
): Response {
  return Response.json(errorBody(api.family, kind, message), {
    status: ERROR_STATUS[kind],
    headers: { "x-provr-gateway": "refused" },
  });
}

/**
 * Forwards one call and records it.
 *
 * @param call The call's record.
 * @param api The API.
 * @param up Where it goes, with what.
 * @returns The program's response, and the promise of the record.
 */
export async function forward(call: GatewayCall, api: ProviderApi, up: Upstream): Promise<Forwarded> {
  const controller = new AbortController();
  const watch = up.watch.start({ controller, firstByteMs: up.firstByteMs, idleMs: up.idleMs });
  const end = () => watch.stop();
  let response: Response;
  try {
    response = await up.fetch(up.url, {
      method: "POST",
      headers: up.headers,
      body: up.body,
      signal: controller.signal,
    });
  } catch (error) {
    end();
    const failure = controller.signal.reason instanceof Silence ? controller.signal.reason : error;
    const message = up.scrub.text(`the model provider did not answer: ${errorMessage(failure)}`);
    await call.failed({ name: nameOf(failure), message, status: null, response: null });
    const kind = failure instanceof Silence ? "timeout" : "bad_gateway";
    return { response: gatewayError(api, kind, message), recorded: Promise.resolve() };
  }
  call.firstByte();
  watch.touch();
  const passed = passedHeaders(response.headers, up.scrub);
  const declared = Number(passed.length ?? "");
  if (Number.isFinite(declared) && declared > up.responseBytes) {
    end();
    await response.body?.cancel().catch(() => {});
    const error = tooLarge(up.responseBytes, `${declared} bytes declared`);
    await call.failed({ name: error.name, message: error.message, status: response.status, response: null });
    return { response: gatewayError(api, "bad_gateway", error.message), recorded: Promise.resolve() };
  }
  const answer = new Answer(response, { controller, watch, limit: up.responseBytes, scrub: up.scrub });
  const streaming = response.ok && passed.type.includes("text/event-stream");
  call.streamed = streaming;
  // A stream's first chunk is asked for now, so that it comes while the program's response is made.
  const first = streaming ? answer.next() : null;
  first?.catch(() => {}); // awaited, with its error, by the first pull
  const headers = passed.pairs;
  if (first) return streamThrough(call, api, { response, headers, answer, first, end, scrub: up.scrub });
  try {
    return { response: await whole(call, api, { response, headers, answer }), recorded: Promise.resolve() };
  } finally {
    end();
  }
}

function nameOf(error: unknown): string {
  return error instanceof Error && error.name !== "Error" && error.name !== "TypeError"
    ? error.name
    : "ProviderUnreachable";
}

/** A response that does not stream: read whole, recorded, then passed back as the provider sent it. */
async function whole(
  call: GatewayCall,
  api: ProviderApi,
  got: { response: Response; headers: [string, string][]; answer: Answer },
): Promise<Response> {
  const { response, headers, answer } = got;
  call.storeRequest(); // while the body comes
  try {
    while (await answer.next() !== null) { /* read whole */ }
  } catch (error) {
    await answer.cancel(error);
    const message = `the model provider's answer was cut: ${errorMessage(error)}`;
    await call.failed({ name: nameOf(error), message, status: response.status, response: answer.bytes() });
    return gatewayError(api, error instanceof Silence ? "timeout" : "bad_gateway", message);
  }
  const bytes = answer.bytes();
  const status = response.status;
  if (response.ok) call.storeResponse(bytes); // on its way to disk while its JSON is read
  const body = parseJson(new TextDecoder().decode(bytes));
  if (!response.ok) {
    // The provider's own error: the program's SDK reads it as it would without the gateway.
    const message = str(obj(obj(body).error).message) ?? `HTTP ${status}`;
    await call.failed({ name: "ProviderError", message, status, response: bytes });
    return new Response(bytes, { status, headers });
  }
  if (body === undefined || typeof body !== "object" || body === null || Array.isArray(body)) {
    const message = `the model provider answered ${status} with a body that is not a JSON object`;
    await call.failed({ name: "ProviderGarbage", message, status, response: bytes });
    return gatewayError(api, "bad_gateway", message);
  }
  await call.ok({ status, body, bytes, stream: null });
  return new Response(bytes, { status, headers });
}

/**
 * A stream: each chunk on to the program as it arrives, kept and reassembled for the record; the chunk that ends
 * the call (its last event, or an error event) waits until the call's event is written.
 */
function streamThrough(
  call: GatewayCall,
  api: ProviderApi,
  got: {
    response: Response;
    headers: [string, string][];
    answer: Answer;
    /** The first chunk, asked for already. */
    first: Promise<Uint8Array | null>;
    end: () => void;
    scrub: KeyScrubber;
  },
): Forwarded {
  const { response, answer } = got;
  let first: Promise<Uint8Array | null> | null = got.first;
  const status = response.status;
  const reading = new StreamReading(api, got.scrub);
  let settle!: () => void;
  const recorded = new Promise<void>((resolve) => (settle = resolve));
  let done = false;
  let passed = 0; // pulls of the program so far
  const record = async (write: () => Promise<void>) => {
    if (done) return;
    done = true;
    await write().catch(() => {});
    got.end();
    settle();
  };
  const cut = async (program: ReadableStreamDefaultController<Uint8Array>, error: unknown, what: string) => {
    const message = `${what}: ${errorMessage(error)}`;
    const failure = { name: nameOf(error), message, status, response: answer.bytes() };
    await record(() => call.failed(failure, reading.assembly.body()));
    program.enqueue(encoder.encode(streamErrorEvent(api.name, message)));
    program.close();
  };
  const stream = new ReadableStream<Uint8Array>({
    pull: async (program) => {
      let chunk: Uint8Array | null;
      try {
        chunk = await (first ?? answer.next());
        first = null;
      } catch (error) {
        await answer.cancel(error);
        return await cut(program, error, "the model provider's stream was cut");
      }
      // The request is read and stored on a later turn, asked for once a read after the first chunk returned:
      // that chunk has gone on by then, and the timer of the turn, armed any sooner, delayed it.
      if (passed++ > 0) call.storeRequestSoon();
      if (chunk === null) {
        reading.end();
        if (!done) await ended(call, { api, reading, program, status, raw: answer.bytes(), record });
        program.close();
        return;
      }
      call.firstByte();
      // The chunk that ends the call goes on once the call is recorded; one that cannot, at once, unread.
      const assembly = reading.take(chunk) ? reading.assembly : null;
      if (!done && assembly && (assembly.complete() || assembly.error() !== null)) {
        await ended(call, { api, reading, program, status, raw: answer.bytes(), record });
        // The record holds the stream up to here: whatever the provider sends after its end goes nowhere, where
        // an SDK that reads on past the end (event by event) would hand the program text the record lacks.
        program.enqueue(chunk);
        await answer.cancel(new Error("the call ended"));
        program.close();
        return;
      }
      program.enqueue(chunk);
    },
    cancel: async (reason) => {
      await answer.cancel(reason);
      const message = "the program closed the stream before its end";
      const failure = { name: "StreamAbandoned", message, status, response: answer.bytes() };
      await record(() => call.failed(failure, reading.assembly.body()));
    },
  }, { highWaterMark: 0 });
  return { response: new Response(stream, { status, headers: got.headers }), recorded };
}

/**
 * A stream that ended: whole (`model_called`), with the provider's error event, or cut before its last event (the
 * program then gets the API's error event).
 */
async function ended(
  call: GatewayCall,
  end: {
    api: ProviderApi;
    reading: StreamReading;
    program: ReadableStreamDefaultController<Uint8Array>;
    status: number;
    raw: Uint8Array;
    record: (write: () => Promise<void>) => Promise<void>;
  },
): Promise<void> {
  const { api, status, raw } = end;
  const assembly = end.reading.assembly;
  const said = assembly.error();
  if (said === null && assembly.complete()) {
    return await end.record(() => call.ok({ status, body: assembly.body(), bytes: null, stream: raw }));
  }
  if (said !== null) {
    return await end.record(() =>
      call.failed({ name: "ProviderError", message: said, status, response: raw }, assembly.body())
    );
  }
  const message = "the model provider's stream ended before its last event";
  await end.record(() => call.failed({ name: "StreamCut", message, status, response: raw }, assembly.body()));
  end.program.enqueue(encoder.encode(streamErrorEvent(api.name, message)));
}

/**
 * Passes on a request that is not a model call (`count_tokens`, `models`), unrecorded, with the bounds of a
 * call: its answer is read within the run's limit and the same waits, and scrubbed of the key.
 *
 * @param api The API the program called.
 * @param up Where it goes, with what, and the request's method.
 * @returns The program's response: the provider's status and body, or the gateway's error.
 */
export async function passOn(api: ProviderApi, up: Upstream & { method: string }): Promise<Response> {
  const controller = new AbortController();
  const watch = up.watch.start({ controller, firstByteMs: up.firstByteMs, idleMs: up.idleMs });
  let answer: Answer | null = null;
  try {
    const response = await up.fetch(up.url, {
      method: up.method,
      headers: up.headers,
      ...(up.method === "POST" ? { body: up.body } : {}),
      signal: controller.signal,
    });
    watch.touch();
    answer = new Answer(response, { controller, watch, limit: up.responseBytes, scrub: up.scrub });
    while (await answer.next() !== null) { /* read whole */ }
    return new Response(answer.bytes(), {
      status: response.status,
      headers: { "content-type": response.headers.get("content-type") ?? "application/json" },
    });
  } catch (error) {
    const failure = controller.signal.reason instanceof Silence ? controller.signal.reason : error;
    await answer?.cancel(failure);
    const message = up.scrub.text(`the model provider's answer failed: ${errorMessage(failure)}`);
    return gatewayError(api, failure instanceof Silence ? "timeout" : "bad_gateway", message);
  } finally {
    watch.stop();
  }
}
