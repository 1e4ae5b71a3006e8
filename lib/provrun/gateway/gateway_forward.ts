/**
 * The forwarding of one model call: the request goes to the provider with the real key; a response that does not
 * stream is read whole (cut past the run's limit) and passed back as the provider sent it; a stream passes each
 * chunk to the program as it arrives, while the same bytes are kept and reassembled for the record. A provider
 * that never answers, goes silent mid-stream, drops the connection, sends garbage or too much is cut: the program
 * gets its SDK's kind of error (an error status with the provider's error body, or the API's error event at the
 * end of the stream), and the call is recorded as failed with what arrived. The record is written once the
 * program has its answer: its writes are synchronous (a payload is on disk before its event), and the program
 * waits for nothing but the provider.
 * @module
 */
import { PayloadTooLarge } from "../run/errors.ts";
import { errorMessage } from "../run/recorder.ts";
import type { GatewayCall } from "./gateway_call.ts";
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
import { SseParser } from "./sse.ts";

/** Where and how a call is forwarded. */
export interface Upstream {
  /** The provider's URL for this call. */
  url: string;
  /** The headers to send (the real key among them). */
  headers: Headers;
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
  /** Aborted when the gateway closes. */
  signal: AbortSignal;
  /** Settles once the program's response is sent (`Deno.ServeHandlerInfo.completed`): the record comes after. */
  sent: Promise<void>;
}

/** What the program gets, and when the call's record is written. */
export interface Forwarded {
  response: Response;
  /** Settles once the call's event is written. */
  recorded: Promise<void>;
}

class Silence extends Error {
  constructor(what: string, ms: number) {
    super(`the provider sent ${what} for ${Math.round(ms / 1000)} s; the gateway stopped waiting`);
    this.name = "ProviderTimeout";
  }
}

const encoder = new TextEncoder();

/** Response headers that describe the connection or the encoding, which the gateway's own response sets anew. */
const DROPPED = [
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "set-cookie",
];

function passedHeaders(from: Headers): Headers {
  const headers = new Headers(from);
  for (const name of DROPPED) headers.delete(name);
  return headers;
}

function tooLarge(limit: number, size: string): PayloadTooLarge {
  return new PayloadTooLarge(
    `the model's response passed ${limit} bytes (${size}); it was cut and refused: raise ` +
      `agent.limits.model_bytes if the model should answer with that much`,
  );
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
 * One timer for a call however many chunks it reads: the wait for the answer, then for each next byte. It aborts
 * the call when the provider stays silent; a chunk that arrives only moves the time on.
 */
class Watchdog {
  readonly #controller: AbortController;
  readonly #idleMs: number;
  #what = "no answer";
  #wait: number;
  #last = performance.now();
  #timer: ReturnType<typeof setTimeout> | null;

  constructor(controller: AbortController, ms: { firstByteMs: number; idleMs: number }) {
    this.#controller = controller;
    this.#idleMs = ms.idleMs;
    this.#wait = ms.firstByteMs;
    this.#timer = setTimeout(() => this.#check(), this.#wait);
  }

  #check(): void {
    const silent = performance.now() - this.#last;
    if (silent >= this.#wait) {
      this.#timer = null;
      this.#controller.abort(new Silence(this.#what, this.#wait));
    } else this.#timer = setTimeout(() => this.#check(), this.#wait - silent);
  }

  /** The answer came, or a chunk of it: the next wait is for more. */
  touch(): void {
    this.#last = performance.now();
    this.#what = "nothing more";
    this.#wait = this.#idleMs;
  }

  stop(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}

/** The provider's answer as it is read: its reader, its watchdog, and its bytes counted against the limit. */
class Answer {
  readonly chunks: Uint8Array[] = [];
  size = 0;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #controller: AbortController;
  readonly #watch: Watchdog;
  readonly #limit: number;

  constructor(response: Response, call: { controller: AbortController; watch: Watchdog; limit: number }) {
    this.#reader = response.body!.getReader();
    this.#controller = call.controller;
    this.#watch = call.watch;
    this.#limit = call.limit;
  }

  /** The next chunk, or null at the end; throws why the answer was cut (silence, size, the connection). */
  async next(): Promise<Uint8Array | null> {
    let step: ReadableStreamReadResult<Uint8Array>;
    try {
      step = await this.#reader.read();
    } catch (error) {
      throw this.#controller.signal.reason instanceof Error ? this.#controller.signal.reason : error;
    }
    if (step.done) {
      this.#watch.stop();
      return null;
    }
    this.#watch.touch();
    this.size += step.value.byteLength;
    if (this.size > this.#limit) throw tooLarge(this.#limit, `at least ${this.size} bytes`);
    this.chunks.push(step.value);
    return step.value;
  }

  /** Stops reading: the provider's connection is closed. */
  async cancel(reason: unknown): Promise<void> {
    this.#watch.stop();
    this.#controller.abort(reason);
    await this.#reader.cancel(reason).catch(() => {});
  }

  /** The bytes kept so far (all that arrived within the limit), as one array. */
  bytes(): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(this.chunks.reduce((n, c) => n + c.byteLength, 0));
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  }
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
  const onClose = () => controller.abort(new Error("the run ended"));
  up.signal.addEventListener("abort", onClose, { once: true });
  const end = () => up.signal.removeEventListener("abort", onClose);
  const watch = new Watchdog(controller, up);
  let response: Response;
  try {
    response = await up.fetch(up.url, {
      method: "POST",
      headers: up.headers,
      body: up.body,
      signal: controller.signal,
    });
  } catch (error) {
    watch.stop();
    end();
    const failure = controller.signal.reason instanceof Silence ? controller.signal.reason : error;
    const message = `the model provider did not answer: ${errorMessage(failure)}`;
    const recorded = call.failed({ name: nameOf(failure), message, status: null, response: null });
    return {
      response: gatewayError(api, failure instanceof Silence ? "timeout" : "bad_gateway", message),
      recorded,
    };
  }
  call.firstByte();
  watch.touch();
  const declared = Number(response.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > up.responseBytes) {
    watch.stop();
    end();
    await response.body?.cancel().catch(() => {});
    const error = tooLarge(up.responseBytes, `${declared} bytes declared`);
    const recorded = call.failed({
      name: error.name,
      message: error.message,
      status: response.status,
      response: null,
    });
    return { response: gatewayError(api, "bad_gateway", error.message), recorded };
  }
  const answer = new Answer(response, { controller, watch, limit: up.responseBytes });
  const streaming = response.ok && (response.headers.get("content-type") ?? "").includes("text/event-stream");
  call.streamed = streaming;
  if (streaming) return streamThrough(call, api, { response, answer, end, sent: up.sent });
  try {
    return await whole(call, api, { response, answer, sent: up.sent });
  } finally {
    end();
  }
}

function nameOf(error: unknown): string {
  return error instanceof Error && error.name !== "Error" && error.name !== "TypeError"
    ? error.name
    : "ProviderUnreachable";
}

/** A response that does not stream: read whole, passed back as the provider sent it, then recorded. */
async function whole(
  call: GatewayCall,
  api: ProviderApi,
  got: { response: Response; answer: Answer; sent: Promise<void> },
): Promise<Forwarded> {
  const { response, answer } = got;
  const after = (record: () => Promise<void>) => afterSent(got.sent, record);
  try {
    while (await answer.next() !== null) { /* read whole */ }
  } catch (error) {
    await answer.cancel(error);
    const message = `the model provider's answer was cut: ${errorMessage(error)}`;
    const failure = { name: nameOf(error), message, status: response.status, response: answer.bytes() };
    return {
      response: gatewayError(api, error instanceof Silence ? "timeout" : "bad_gateway", message),
      recorded: call.failed(failure),
    };
  }
  const bytes = answer.bytes();
  const headers = passedHeaders(response.headers);
  if (!response.ok) {
    // The provider's own error: the program's SDK reads it as it would without the gateway.
    const recorded = after(() => {
      const said = str(obj(obj(parseJson(new TextDecoder().decode(bytes))).error).message);
      const message = said ?? `HTTP ${response.status}`;
      return call.failed({ name: "ProviderError", message, status: response.status, response: bytes });
    });
    return { response: new Response(bytes, { status: response.status, headers }), recorded };
  }
  if (!looksLikeObject(bytes)) {
    const message = `the model provider answered ${response.status} with a body that is not a JSON object`;
    const recorded = call.failed({
      name: "ProviderGarbage",
      message,
      status: response.status,
      response: bytes,
    });
    return { response: gatewayError(api, "bad_gateway", message), recorded };
  }
  const recorded = after(() => {
    const body = parseJson(new TextDecoder().decode(bytes));
    if (body === undefined || typeof body !== "object" || body === null || Array.isArray(body)) {
      const message = `the model provider answered ${response.status} with a body that is not JSON`;
      return call.failed({ name: "ProviderGarbage", message, status: response.status, response: bytes });
    }
    return call.ok({ status: response.status, body, bytes, stream: null });
  });
  return { response: new Response(bytes, { status: response.status, headers }), recorded };
}

/**
 * Runs a record once the program's response is sent (or the program hung up), and the server has had a turn to
 * finish sending it (`completed` settles a little before the last bytes leave): the record's writes are
 * synchronous (a payload is on disk before its event), and would otherwise hold them back.
 */
function afterSent(sent: Promise<void>, record: () => Promise<void>): Promise<void> {
  return sent.catch(() => {}).then(() => new Promise<void>((resolve) => setTimeout(resolve, 0))).then(record);
}

/** A body that starts with `{` and ends with `}` (white space aside): what a JSON object is, cheaply told. */
function looksLikeObject(bytes: Uint8Array): boolean {
  const space = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
  let i = 0;
  let j = bytes.length - 1;
  while (i <= j && space(bytes[i]!)) i++;
  while (j >= i && space(bytes[j]!)) j--;
  return i < j && bytes[i] === 0x7b && bytes[j] === 0x7d;
}

/** A stream: each chunk on to the program as it arrives, kept and reassembled for the record. */
function streamThrough(
  call: GatewayCall,
  api: ProviderApi,
  got: { response: Response; answer: Answer; end: () => void; sent: Promise<void> },
): Forwarded {
  const { response, answer } = got;
  const after = (record: () => Promise<void>) => afterSent(got.sent, record);
  const parser = new SseParser();
  const assembly = api.assemble();
  let settle!: () => void;
  const recorded = new Promise<void>((resolve) => (settle = resolve));
  const finish = (record: Promise<void>) => void record.catch(() => {}).finally(() => (got.end(), settle()));
  const stream = new ReadableStream<Uint8Array>({
    pull: async (program) => {
      let chunk: Uint8Array | null;
      try {
        chunk = await answer.next();
      } catch (error) {
        await answer.cancel(error);
        const message = `the model provider's stream was cut: ${errorMessage(error)}`;
        program.enqueue(encoder.encode(streamErrorEvent(api.name, message)));
        program.close();
        const failure = { name: nameOf(error), message, status: response.status, response: answer.bytes() };
        finish(after(() => call.failed(failure, assembly.body())));
        return;
      }
      if (chunk === null) {
        for (const e of parser.end()) assembly.take(e);
        finish(after(ended(call, { api, assembly, program, status: response.status, raw: answer.bytes() })));
        return;
      }
      program.enqueue(chunk);
      call.firstByte();
      for (const e of parser.push(chunk)) assembly.take(e);
    },
    cancel: async (reason) => {
      await answer.cancel(reason);
      const message = "the program closed the stream before its end";
      const failure = { name: "StreamAbandoned", message, status: response.status, response: answer.bytes() };
      finish(after(() => call.failed(failure, assembly.body())));
    },
  }, { highWaterMark: 0 });
  return {
    response: new Response(stream, { status: response.status, headers: passedHeaders(response.headers) }),
    recorded,
  };
}

/**
 * A stream that ended: whole (`model_called`), or with an error event or cut before its last event. The program's
 * stream is closed at once (after the API's error event, for a stream cut short); the record it gives is written
 * once the response is sent.
 */
function ended(
  call: GatewayCall,
  end: {
    api: ProviderApi;
    assembly: ReturnType<ProviderApi["assemble"]>;
    program: ReadableStreamDefaultController<Uint8Array>;
    status: number;
    raw: Uint8Array;
  },
): () => Promise<void> {
  const { api, assembly, program, status, raw } = end;
  const said = assembly.error();
  const whole = said === null && assembly.complete();
  const message = "the model provider's stream ended before its last event";
  if (!whole && said === null) program.enqueue(encoder.encode(streamErrorEvent(api.name, message)));
  program.close();
  return () => {
    if (whole) return call.ok({ status, body: assembly.body(), bytes: null, stream: raw });
    const failure = said === null
      ? { name: "StreamCut", message, status, response: raw }
      : { name: "ProviderError", message: said, status, response: raw };
    return call.failed(failure, assembly.body());
  };
}
