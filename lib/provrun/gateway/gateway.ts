/**
 * The recording model gateway of a run: a server on 127.0.0.1 that speaks the provider API the run's agent
 * speaks (Anthropic Messages; OpenAI Chat Completions and Responses), takes only requests that carry the run's
 * token (compared in constant time), forwards each model call to the run's provider with the real key, and
 * records it (`gateway_call.ts`, `gateway_forward.ts`). The key stays in provr: the program has the token.
 *
 * Before anything else it refuses, counted but not recorded (a web page must not write into the evidence), a
 * request that names another host (421: DNS rebinding, an absolute-form target) or comes from a web page (403).
 * What it refuses, with the status the program's SDK understands and a recorded problem: a request without the
 * token (401), a path that is not a model call of the API (404), a body over the limit (413), a body that is not
 * a JSON object naming a model (400), an encoding it cannot read (415), more calls at once than its limit (429).
 * Refusals are recorded up to a count, then only counted, so a flood fills neither memory nor the evidence.
 * @module
 */
import { crossSite, localHosts, refusedHost } from "../../provevi/guard/local_request.ts";
import { type DoorLimits, serveDoor } from "../../provevi/guard/mod.ts";
import type { Json } from "../../provevi/mod.ts";
import { ModelKeyMissing } from "../run/errors.ts";
import type { EvidenceRecorder } from "../run/recorder.ts";
import { ANTHROPIC_MESSAGES } from "./anthropic_api.ts";
import { type CallRecording, GatewayCall, type RecordedCall } from "./gateway_call.ts";
import { gatewaySpanContext } from "./gateway_span.ts";
import { forward, gatewayError, passOn, type Upstream } from "./gateway_forward.ts";
import { KeyScrubber } from "./key_scrub.ts";
import { CallWatch } from "./call_watch.ts";
import { type RequestHeaders, requestHeaders } from "./request_headers.ts";
import { BodyReader } from "./body_reader.ts";
import { OPENAI_CHAT, OPENAI_RESPONSES } from "./openai_apis.ts";
import { type GatewayErrorKind, obj, parseJson, type ProviderApi } from "./provider_api.ts";
import { concatBytes } from "../../provevi/evidence/bytes.ts";

/** The default largest request body: 32 MiB. */
export const DEFAULT_REQUEST_BYTES = 32 * 1024 * 1024;
/** How many refusals are recorded one by one; the rest are counted. */
const RECORDED_REFUSALS = 50;

/** What a gateway is started with. */
export interface GatewayOptions {
  /** The run's provider: `anthropic`, `openai` or `openai-compatible`. */
  provider: "anthropic" | "openai" | "openai-compatible";
  /** The provider's base URL: Anthropic's root (`https://api.anthropic.com`), OpenAI's with `/v1`. */
  upstream: string;
  /** The real key, added on the way out; null when the provider takes none. */
  key: string | null;
  /** The variable the key was read from, named in an error (never its value). */
  keyVariable?: string;
  /** The run's recorder. */
  recorder: EvidenceRecorder;
  /** The class named as the events' component. */
  component: string;
  /** The largest request body ({@linkcode DEFAULT_REQUEST_BYTES}). */
  requestBytes?: number;
  /** The largest response body (`agent.limits.model_bytes`). */
  responseBytes: number;
  /** How long to wait for a provider's first byte (10 minutes by default). */
  firstByteMs?: number;
  /** How long a provider's stream may stay silent (5 minutes by default). */
  idleMs?: number;
  /** At most this many calls at once (32 by default); more get 429. */
  concurrent?: number;
  /** The `fetch` of the forwarding; the global one by default. */
  fetch?: typeof globalThis.fetch;
  /** Prices a call's data (the run's table), or null. */
  price?: ((data: { [key: string]: Json }) => string | null) | null;
  /** Told of each call once it is recorded. */
  onCall?: (call: RecordedCall) => void;
  /** The run's session, which each call's `chat` span names as `gen_ai.conversation.id`. */
  conversationId?: string | null;
  /** Told of the tools each request offered, with their descriptions. */
  onTools?: (tools: [string, string][]) => void;
  /** The limits of its door (`serveDoor`): slow heads and bodies, idle connections, how many at once. */
  doorLimits?: DoorLimits;
}

/** What a gateway has seen. */
export interface GatewayCounts {
  /** Model calls forwarded. */
  calls: number;
  /** Requests refused, by kind. */
  refused: Partial<Record<GatewayErrorKind, number>>;
  /** Other requests forwarded without a record of their own (`count_tokens`, `models`). */
  passed: number;
}

const decoder = new TextDecoder();

/** Where a request names its model: SDKs write it first, so the start of the body is read before the whole. */
const MODEL_AT_START = /^\s*\{\s*"model"\s*:\s*"((?:[^"\\]|\\.){1,200})"\s*,/;

/**
 * The model a request names, or null when the body is not a JSON object that names one. A body that starts
 * with its model (as the SDKs write it) is parsed no further here: the provider judges the rest, and the record
 * reads it after the answer. Any other body is parsed whole.
 */
function requestModel(bytes: Uint8Array): string | null {
  const head = decoder.decode(bytes.subarray(0, 512));
  const quick = MODEL_AT_START.exec(head);
  if (quick) {
    const model = parseJson(`"${quick[1]}"`);
    if (typeof model === "string" && model !== "") return model;
  }
  const json = parseJson(decoder.decode(bytes));
  const whole = obj(json);
  return json === whole && typeof whole.model === "string" && whole.model !== "" ? whole.model : null;
}

/**
 * Whether a text is the run's token, in a time that depends on its length alone: every character is compared,
 * none ends the comparison early (as `@std/crypto`'s `timingSafeEqual` compares bytes, here without encoding
 * the text first, which cost more than the rest of the request's checks). The token's length is no secret: its
 * form is fixed.
 */
function isToken(given: string, token: string): boolean {
  if (given.length !== token.length) return false;
  let differ = 0;
  for (let i = 0; i < token.length; i++) differ |= given.charCodeAt(i) ^ token.charCodeAt(i);
  return differ === 0;
}

/** True when a key can be sent as a header's value. */
function sendable(key: string): boolean {
  try {
    new Headers({ "x-api-key": key });
    return true;
  } catch {
    return false;
  }
}

/**
 * A running gateway.
 *
 * @example
 * ```ts ignore
 * import { ModelGateway } from "./gateway.ts";
 * await using gateway = ModelGateway.start({ provider: "anthropic", upstream: "https://api.anthropic.com",
 *   key: Deno.env.get("ANTHROPIC_API_KEY")!, recorder, component: "ModelGateway", responseBytes: 32 << 20 });
 * // the program gets ANTHROPIC_BASE_URL=gateway.url and ANTHROPIC_API_KEY=gateway.token
 * ```
 */
export class ModelGateway implements AsyncDisposable {
  /** `http://127.0.0.1:<port>`: Anthropic's base URL; OpenAI's is this with `/v1`. */
  readonly url: string;
  /** The run's token, the program's only key. */
  readonly token: string;
  /** What the gateway has seen. */
  readonly counts: GatewayCounts = { calls: 0, refused: {}, passed: 0 };
  readonly #options: GatewayOptions;
  readonly #apis: ProviderApi[];
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #watch = new CallWatch();
  readonly #pending = new Set<Promise<void>>();
  #inFlight = 0;
  #refusalsRecorded = 0;
  #recordingOf: CallRecording | null = null;
  readonly #scrub: KeyScrubber;
  readonly #hosts: string[];
  /** The provider's base URL, without its trailing `/` (and, for Anthropic, its `/v1`: the path brings it). */
  readonly #base: string;

  private constructor(options: GatewayOptions) {
    if (options.key !== null && !sendable(options.key)) {
      // Found now, not at each request: a header that cannot be built would fail every call with a bare 500.
      throw new ModelKeyMissing(
        `the key in ${
          options.keyVariable ?? "the provider's key variable"
        } holds a character an HTTP header ` +
          `cannot carry (a line break or another control character): set it to the key alone`,
      );
    }
    this.#options = options;
    this.#scrub = new KeyScrubber(options.key);
    const base = options.upstream.replace(/\/+$/, "");
    this.#base = options.provider === "anthropic" ? base.replace(/\/v1$/, "") : base;
    this.#apis = options.provider === "anthropic" ? [ANTHROPIC_MESSAGES] : [OPENAI_CHAT, OPENAI_RESPONSES];
    this.token = `provr-run-${
      Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("")
    }`;
    this.#server = serveDoor(
      {
        hostname: "127.0.0.1",
        port: 0,
        onError: () => new Response(null, { status: 500 }),
        ...(options.doorLimits ? { limits: options.doorLimits } : {}),
        // every stranger is refused before its body is read (its Host, its site, its token), so only the run's
        // own program could send one slowly: the body's rate is left unwatched, for the time to first token
        watchBodies: false,
        // and a program that stops taking a streamed answer is cut by the call's own deadline (call_watch.ts)
        watchAnswers: false,
        // a cut connection is recorded as a refusal (up to the count); a slow body's 408 also fails its read,
        // which the handler records as a body that cannot be read
        onRefusal: (refusal) => void this.#refuse(this.#apis[0]!, "slow_client", refusal.message),
      },
      (request) => this.#handle(request),
    );
    this.url = `http://127.0.0.1:${this.#server.addr.port}`;
    this.#hosts = localHosts(this.#server.addr.port);
  }

  /**
   * Starts a gateway on a free port of 127.0.0.1.
   *
   * @param options The provider, its key, the recorder and the limits.
   * @returns The gateway, listening.
   * @throws ModelKeyMissing for a key that cannot be sent in a header (its variable named, never its value).
   */
  static start(options: GatewayOptions): ModelGateway {
    return new ModelGateway(options);
  }

  /** The base URL of the program's OpenAI SDK: the gateway's URL with `/v1`. */
  get openaiUrl(): string {
    return `${this.url}/v1`;
  }

  /** Stops taking requests, ends the calls under way, and waits until every call is recorded. */
  async close(): Promise<void> {
    this.#watch.close();
    await this.#server.shutdown().catch(() => {});
    while (this.#pending.size) await Promise.allSettled([...this.#pending]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #handle(request: Request): Promise<Response> {
    // parsed, not constructed: the same URL at a fraction of the cost (the server's URL is always whole)
    const url = URL.parse(request.url)!;
    const api = this.#apis.find((a) => a.path === url.pathname) ?? null;
    const family = this.#apis[0]!;
    const stranger = this.#stranger(request, family);
    if (stranger !== null) return stranger;
    const headers = requestHeaders(request.headers);
    if (!isToken(headers.given, this.token)) {
      return await this.#refuse(
        family,
        "unauthorized",
        `the request to ${url.pathname} does not carry the run's token`,
      );
    }
    if (api === null || request.method !== "POST") return await this.#other(request, { url, headers });
    if (this.#inFlight >= (this.#options.concurrent ?? 32)) {
      return await this.#refuse(
        api,
        "busy",
        `more than ${this.#options.concurrent ?? 32} model calls at once`,
      );
    }
    this.#inFlight++;
    try {
      return await this.#call(api, request, { url, headers });
    } finally {
      this.#inFlight--;
    }
  }

  /** A refusal for a request meant for another host or sent by a web page, counted only; else null. */
  #stranger(request: Request, family: ProviderApi): Response | null {
    const host = refusedHost(request, this.#hosts);
    const site = host === null ? crossSite(request, this.#hosts) : null;
    if (host === null && site === null) return null;
    const kind = host !== null ? "wrong_host" : "cross_site";
    this.counts.refused[kind] = (this.counts.refused[kind] ?? 0) + 1;
    return gatewayError(
      family,
      kind,
      host !== null
        ? `refused the Host "${host.slice(0, 100)}": the model gateway answers ${this.url} only`
        : `refused a request from a web page (${site})`,
    );
  }

  /** A request that is not a model call: the few the SDKs make are passed on unrecorded; the rest are refused. */
  async #other(request: Request, read: { url: URL; headers: RequestHeaders }): Promise<Response> {
    const { url, headers } = read;
    const family = this.#apis[0]!;
    const passed = family.family === "anthropic"
      ? request.method === "POST" && url.pathname === "/v1/messages/count_tokens"
      : request.method === "GET" && url.pathname === "/v1/models";
    if (!passed) {
      return await this.#refuse(
        family,
        "not_found",
        `${request.method} ${url.pathname} is not a model call the gateway serves`,
      );
    }
    const body = request.method === "POST"
      ? await this.#body(request, { api: family, headers })
      : new Uint8Array();
    if (body instanceof Response) return body;
    this.counts.passed++;
    return await passOn(family, { ...this.#upstream(url, headers, body), method: request.method });
  }

  /** Reads a request's body up to the limit; a refusal's response when it cannot. */
  async #body(
    request: Request,
    read: { api: ProviderApi; headers: RequestHeaders },
  ): Promise<Uint8Array<ArrayBuffer> | Response> {
    const { api, headers } = read;
    const limit = this.#options.requestBytes ?? DEFAULT_REQUEST_BYTES;
    const { encoding, length } = headers;
    if (!["identity", "gzip", "deflate"].includes(encoding)) {
      return await this.#refuse(
        api,
        "unsupported_encoding",
        `the request's content-encoding ${encoding} is not gzip, deflate or none`,
      );
    }
    const declared = Number(length ?? "");
    if (Number.isFinite(declared) && declared > limit) {
      return await this.#refuse(
        api,
        "too_large",
        `the request body of ${declared} bytes passes the gateway's limit of ${limit}`,
      );
    }
    // A body of a stated length, not encoded, is read in one piece: no stream to step through chunk by chunk
    // (its first token is what a streamed call waits for). The server reads no more than the stated length.
    const stated = length !== null && !headers.transferEncoded;
    if (encoding === "identity" && stated) {
      try {
        return await request.bytes();
      } catch (error) {
        return await this.#refuse(
          api,
          "malformed",
          `the request body cannot be read: ${(error as Error).message}`,
        );
      }
    }
    let stream = request.body;
    if (stream && encoding !== "identity") {
      stream = stream.pipeThrough(new DecompressionStream(encoding as CompressionFormat));
    }
    const reader = stream ? new BodyReader(stream) : null;
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for (let chunk = await reader?.read() ?? null; chunk !== null; chunk = await reader!.read()) {
        size += chunk.byteLength;
        if (size > limit) {
          await reader!.cancel(new Error("the request body passed the limit")).catch(() => {});
          return await this.#refuse(
            api,
            "too_large",
            `the request body passes the gateway's limit of ${limit} bytes`,
          );
        }
        chunks.push(chunk);
      }
    } catch (error) {
      return await this.#refuse(
        api,
        "malformed",
        `the request body cannot be read: ${(error as Error).message}`,
      );
    }
    return concatBytes(chunks);
  }

  async #call(
    api: ProviderApi,
    request: Request,
    read: { url: URL; headers: RequestHeaders },
  ): Promise<Response> {
    const bytes = await this.#body(request, { api, headers: read.headers });
    if (bytes instanceof Response) return bytes;
    const model = requestModel(bytes);
    if (model === null) {
      return await this.#refuse(api, "malformed", `the request body is not a JSON object that names a model`);
    }
    this.counts.calls++;
    const call = new GatewayCall(this.#recording(), { api, bytes, model });
    const forwarded = await forward(call, api, this.#upstream(read.url, read.headers, bytes));
    const pending = forwarded.recorded.catch(() => {}).finally(() => this.#pending.delete(pending));
    this.#pending.add(pending);
    return forwarded.response;
  }

  /** Where a request goes, with what, and the bounds of its answer. */
  #upstream(url: URL, headers: RequestHeaders, body: Uint8Array<ArrayBuffer>): Upstream {
    return {
      url: this.#upstreamUrl(url),
      headers: this.#headers(headers),
      body,
      fetch: this.#options.fetch ?? fetch,
      responseBytes: this.#options.responseBytes,
      firstByteMs: this.#options.firstByteMs ?? 600_000,
      idleMs: this.#options.idleMs ?? 300_000,
      watch: this.#watch,
      scrub: this.#scrub,
    };
  }

  #recording(): CallRecording {
    const o = this.#options;
    return this.#recordingOf ??= {
      recorder: o.recorder,
      component: o.component,
      provider: o.provider,
      price: o.price ?? null,
      ...(o.onCall ? { onCall: o.onCall } : {}),
      ...(o.onTools ? { onTools: o.onTools } : {}),
      span: gatewaySpanContext(o.provider, {
        upstream: o.upstream,
        conversationId: o.conversationId ?? null,
      }),
    };
  }

  /** The provider's URL of a request: its path under `/v1` after the provider's base. */
  #upstreamUrl(url: URL): string {
    if (this.#options.provider === "anthropic") return `${this.#base}${url.pathname}${url.search}`;
    return `${this.#base}${url.pathname.slice("/v1".length)}${url.search}`;
  }

  /** The program's headers to forward, with the real key. */
  #headers(from: RequestHeaders): [string, string][] {
    const headers = [...from.forwarded];
    const key = this.#options.key;
    if (key !== null) {
      if (this.#options.provider === "anthropic") headers.push(["x-api-key", key]);
      else headers.push(["authorization", `Bearer ${key}`]);
    }
    return headers;
  }

  /** A refused request: recorded (up to a count), and answered in the API's error form. */
  async #refuse(api: ProviderApi, kind: GatewayErrorKind, message: string): Promise<Response> {
    this.counts.refused[kind] = (this.counts.refused[kind] ?? 0) + 1;
    const full = `${message}; the model gateway refused it`;
    if (this.#refusalsRecorded < RECORDED_REFUSALS) {
      this.#refusalsRecorded++;
      const last = this.#refusalsRecorded === RECORDED_REFUSALS;
      await this.#options.recorder.record({
        type: "telemetry_problem",
        component: this.#options.component,
        data: {
          problem: last
            ? `${full} (further refusals are counted in run_completed's gateway, not recorded)`
            : full,
          library: "gateway",
          refused: kind,
        },
      }).catch(() => {});
    }
    return gatewayError(api, kind, full);
  }
}
