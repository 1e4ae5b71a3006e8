/**
 * A model call's request as the capture records it: the call's options as JSON (without the abort signal and
 * headers, file bytes named by their payload), the body that crossed the wire, in RFC 8785 form so that one
 * content has one hash. A replay compares a request with the recorded one through the same functions.
 * @module
 */
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import type { Json } from "../../provevi/mod.ts";
import { canonicalOrNull } from "../../provevi/evidence/mod.ts";
import type { EvidenceRecorder } from "../run/recorder.ts";

/**
 * The call's options as JSON, without the abort signal and headers (which may hold keys); file bytes are
 * stored as their own payloads and named `{"$payload": sha256}`.
 */
export function paramsJson(recorder: EvidenceRecorder, params: LanguageModelV4CallOptions): Promise<Json> {
  return callParamsJson(params, (bytes) => recorder.payload(bytes));
}

/**
 * A model call's options as the capture records them (`params` of the request payload): without the abort
 * signal and headers, file bytes named `{"$payload": sha256}` by what `ref` gives for them. A replay compares a
 * request with the recorded one through it, giving each file's hash without storing it.
 *
 * @param params The call's options.
 * @param ref Stores (or only hashes) a file's bytes, and gives the name to record.
 * @returns The options as JSON.
 * @example
 * ```ts
 * import { callParamsJson } from "./call_request.ts";
 * await callParamsJson({ prompt: [] }, () => Promise.resolve(null)); // { prompt: [] }
 * ```
 */
export async function callParamsJson(
  params: LanguageModelV4CallOptions,
  ref: (bytes: Uint8Array) => Promise<string | null>,
): Promise<Json> {
  const { abortSignal: _a, headers: _h, ...rest } = params as LanguageModelV4CallOptions & {
    headers?: unknown;
  };
  return await toJson(ref, rest);
}

/** A value as JSON: bytes named by `ref`, URLs and dates as text, functions and undefined left out. */
async function toJson(ref: (bytes: Uint8Array) => Promise<string | null>, value: unknown): Promise<Json> {
  if (value instanceof Uint8Array) return { $payload: await ref(value) };
  if (value instanceof URL) return value.href;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return await Promise.all(value.map((v) => toJson(ref, v)));
  if (value && typeof value === "object") {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined && typeof v !== "function") out[k] = await toJson(ref, v);
    }
    return out;
  }
  return (value ?? null) as Json;
}

/**
 * A request as its RFC 8785 text, so that two requests of the same content have one hash whatever the order in
 * which their objects' keys were made: the tools a replay offers come from the record, whose keys are sorted.
 */
export function canonicalText(body: Json): string {
  return canonicalOrNull(body) ?? JSON.stringify(body);
}

/** The request payload: the options, and the body that crossed the wire when the provider gave it. */
export async function requestBody(recorder: EvidenceRecorder, sent: Json, wire: unknown): Promise<Json> {
  const body: { [key: string]: Json } = { params: sent };
  if (wire !== undefined) {
    body.wire = typeof wire === "string"
      ? tryJson(wire)
      : await toJson((bytes) => recorder.payload(bytes), wire);
  }
  return body;
}

/** A text's JSON value, or the text itself when it is not JSON. */
export function tryJson(text: string): Json {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
