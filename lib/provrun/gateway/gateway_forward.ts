/**
 * The forwarding of one model call: the request goes to the provider with the real key; a response that does not
 * stream is read whole (cut past the run's limit) and passed back as the provider sent it; a stream passes each
 * chunk to the program as it arrives, while the same bytes are kept and reassembled for the record. A provider
 * that never answers, goes silent mid-stream, drops the connection, sends garbage or too much is cut: the program
 * gets its SDK's kind of error (an error status with the provider's error body, or the API's error event at the
 * end of the stream), and the call is recorded as failed with what arrived.
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import { limitedFetch, payloadCause } from "../backends/model_limit.ts";
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
  const onClose = () => controller.abort(new Error("the run ended"));
  up.signal.addEventListener("abort", onClose, { once: true });
  const timer = setTimeout(() => controller.abort(new Silence("no answer", up.firstByteMs)), up.firstByteMs);
  let response: Response;
  try {
    response = await limitedFetch(up.responseBytes, { fetch: up.fetch })(up.url, {
      method: "POST",
      headers: up.headers,
      body: up.body,
      signal: controller.signal,
    });
  } catch (error) {
    const cause = payloadCause(error) ??
      (controller.signal.reason instanceof Silence ? controller.signal.reason : null);
    const failure = cause ?? error;
    const kind: GatewayErrorKind = failure instanceof Silence ? "timeout" : "bad_gateway";
    const message = payloadCause(failure)
      ? errorMessage(failure)
      : `the model provider did not answer: ${errorMessage(failure)}`;
    const recorded = call.failed({ name: nameOf(failure), message, status: null, response: null });
    return { response: gatewayError(api, kind, message), recorded };
  } finally {
    clearTimeout(timer);
  }
  call.firstByte();
  const end = () => up.signal.removeEventListener("abort", onClose);
  const streaming = response.ok && (response.headers.get("content-type") ?? "").includes("text/event-stream");
  if (streaming) return streamThrough(call, api, { response, controller, idleMs: up.idleMs, end });
  try {
    return await whole(call, api, { response, controller, idleMs: up.idleMs });
  } finally {
    end();
  }
}

function nameOf(error: unknown): string {
  return error instanceof Error && error.name !== "Error" && error.name !== "TypeError"
    ? error.name
    : "ProviderUnreachable";
}

/** Reads the next chunk, or fails when none comes within `idleMs`. */
async function readIdle(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  idleMs: number,
  what: string,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silent = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Silence(what, idleMs)), idleMs);
  });
  try {
    return await Promise.race([reader.read(), silent]);
  } finally {
    clearTimeout(timer);
  }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** A response that does not stream: read whole, recorded, passed back as the provider sent it. */
async function whole(
  call: GatewayCall,
  api: ProviderApi,
  got: { response: Response; controller: AbortController; idleMs: number },
): Promise<Forwarded> {
  const { response } = got;
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body) {
    const reader = response.body.getReader();
    try {
      for (
        let step = await readIdle(reader, got.idleMs, "nothing more");
        !step.done;
        step = await readIdle(reader, got.idleMs, "nothing more")
      ) {
        chunks.push(step.value);
        size += step.value.byteLength;
      }
    } catch (error) {
      got.controller.abort(error);
      await reader.cancel(error).catch(() => {});
      const message = `the model provider's answer was cut: ${errorMessage(payloadCause(error) ?? error)}`;
      const recorded = call.failed({
        name: nameOf(payloadCause(error) ?? error),
        message,
        status: response.status,
        response: concat(chunks, size),
      });
      return {
        response: gatewayError(api, error instanceof Silence ? "timeout" : "bad_gateway", message),
        recorded,
      };
    }
  }
  const bytes = concat(chunks, size);
  const body = parseJson(new TextDecoder().decode(bytes));
  const headers = passedHeaders(response.headers);
  if (!response.ok) {
    // The provider's own error: the program's SDK reads it as it would without the gateway.
    const said = str(obj(obj(body).error).message) ?? `HTTP ${response.status}`;
    const recorded = call.failed({
      name: "ProviderError",
      message: said,
      status: response.status,
      response: bytes,
    });
    return { response: new Response(bytes, { status: response.status, headers }), recorded };
  }
  if (body === undefined || typeof body !== "object" || body === null) {
    const message = `the model provider answered ${response.status} with a body that is not a JSON object`;
    const recorded = call.failed({
      name: "ProviderGarbage",
      message,
      status: response.status,
      response: bytes,
    });
    return { response: gatewayError(api, "bad_gateway", message), recorded };
  }
  const recorded = call.ok({ status: response.status, body: body as Json, bytes, stream: null });
  return { response: new Response(bytes, { status: response.status, headers }), recorded };
}

/** A stream: each chunk on to the program as it arrives, kept and reassembled for the record. */
function streamThrough(
  call: GatewayCall,
  api: ProviderApi,
  got: { response: Response; controller: AbortController; idleMs: number; end: () => void },
): Forwarded {
  const { response } = got;
  const reader = response.body!.getReader();
  const parser = new SseParser();
  const assembly = api.assemble();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let settle!: () => void;
  const recorded = new Promise<void>((resolve) => (settle = resolve));
  const finish = (record: Promise<void>) => void record.catch(() => {}).finally(() => (got.end(), settle()));
  const stream = new ReadableStream<Uint8Array>({
    pull: async (program) => {
      let step: ReadableStreamReadResult<Uint8Array>;
      try {
        step = await readIdle(reader, got.idleMs, "nothing");
      } catch (error) {
        got.controller.abort(error);
        await reader.cancel(error).catch(() => {});
        const cause = payloadCause(error) ?? error;
        const message = `the model provider's stream was cut: ${errorMessage(cause)}`;
        program.enqueue(encoder.encode(streamErrorEvent(api.name, message)));
        program.close();
        const failure = {
          name: nameOf(cause),
          message,
          status: response.status,
          response: concat(chunks, size),
        };
        finish(call.failed(failure, assembly.body()));
        return;
      }
      if (step.done) {
        for (const e of parser.end()) assembly.take(e);
        finish(ended(call, { api, assembly, program, status: response.status, raw: concat(chunks, size) }));
        return;
      }
      program.enqueue(step.value);
      call.firstByte();
      chunks.push(step.value);
      size += step.value.byteLength;
      for (const e of parser.push(step.value)) assembly.take(e);
    },
    cancel: async (reason) => {
      got.controller.abort(reason);
      await reader.cancel(reason).catch(() => {});
      const message = "the program closed the stream before its end";
      finish(
        call.failed({
          name: "StreamAbandoned",
          message,
          status: response.status,
          response: concat(chunks, size),
        }, assembly.body()),
      );
    },
  });
  return {
    response: new Response(stream, { status: response.status, headers: passedHeaders(response.headers) }),
    recorded,
  };
}

/** A stream that ended: whole (`model_called`), or with an error event or cut before its last event. */
function ended(
  call: GatewayCall,
  end: {
    api: ProviderApi;
    assembly: ReturnType<ProviderApi["assemble"]>;
    program: ReadableStreamDefaultController<Uint8Array>;
    status: number;
    raw: Uint8Array;
  },
): Promise<void> {
  const { api, assembly, program, status, raw } = end;
  const said = assembly.error();
  if (said === null && assembly.complete()) {
    program.close();
    return call.ok({ status, body: assembly.body(), bytes: null, stream: raw });
  }
  if (said !== null) {
    program.close();
    return call.failed({ name: "ProviderError", message: said, status, response: raw }, assembly.body());
  }
  const message = "the model provider's stream ended before its last event";
  program.enqueue(encoder.encode(streamErrorEvent(api.name, message)));
  program.close();
  return call.failed({ name: "StreamCut", message, status, response: raw }, assembly.body());
}
