/**
 * Exact tokens from an OpenAI-compatible server that returns them, as vLLM's does on request: the request asks
 * for them (`return_token_ids: true`, `logprobs: true`), and the reply carries the prompt's token IDs
 * (`prompt_token_ids`, at the top of the reply or of a stream's first chunk), the completion's (`token_ids` on
 * the choice, or on each chunk's choice), and each completion token's log-probability
 * (`choices[0].logprobs.content[].logprob`). The IDs are kept as the server gave them, never decoded and
 * encoded again (which changes them). The capture records them with the call, as a payload.
 * @module
 */
import type { SharedV4ProviderMetadata } from "@ai-sdk/provider";

/** The tokens of one call, as the capture records them (`model_called` `data.tokens_payload`). */
export interface CallTokenIds {
  prompt_token_ids: number[] | null;
  completion_token_ids: number[] | null;
  logprobs: number[] | null;
  /** Each completion token's text, as the server gave it with its log-probability. */
  tokens: string[] | null;
}

/** The key of the provider metadata that carries a call's tokens to the capture. */
export const TOKEN_IDS_KEY = "provrun_token_ids";

/** The request fields that ask a vLLM-style server for token IDs and log-probabilities. */
export function askTokenIds(body: Record<string, unknown>): Record<string, unknown> {
  return { ...body, logprobs: true, return_token_ids: true };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const ints = (v: unknown): number[] | null =>
  Array.isArray(v) && v.every((n) => Number.isInteger(n)) ? v as number[] : null;

/** What one reply (or one chunk) says of tokens: adds to `into`. */
function take(
  into: { prompt: number[] | null; completion: number[]; logprobs: number[]; tokens: string[] },
  body: unknown,
) {
  if (!isObj(body)) return;
  into.prompt ??= ints(body.prompt_token_ids);
  const choice = Array.isArray(body.choices) && isObj(body.choices[0]) ? body.choices[0] : null;
  if (!choice) return;
  into.prompt ??= ints(choice.prompt_token_ids);
  into.completion.push(...(ints(choice.token_ids) ?? []));
  const content = isObj(choice.logprobs) && Array.isArray(choice.logprobs.content)
    ? choice.logprobs.content
    : [];
  for (const c of content) {
    if (isObj(c) && typeof c.logprob === "number") {
      into.logprobs.push(c.logprob);
      into.tokens.push(typeof c.token === "string" ? c.token : "");
    }
  }
}

function metadataOf(
  got: { prompt: number[] | null; completion: number[]; logprobs: number[]; tokens: string[] },
): SharedV4ProviderMetadata | undefined {
  if (got.prompt === null && got.completion.length === 0 && got.logprobs.length === 0) return undefined;
  const tokens: CallTokenIds = {
    prompt_token_ids: got.prompt,
    completion_token_ids: got.completion.length ? got.completion : null,
    logprobs: got.logprobs.length ? got.logprobs : null,
    tokens: got.tokens.length ? got.tokens : null,
  };
  return { [TOKEN_IDS_KEY]: tokens as unknown as SharedV4ProviderMetadata[string] };
}

/**
 * The `metadataExtractor` of `@ai-sdk/openai-compatible` that reads a call's tokens from its reply, whole or
 * streamed, into the provider metadata under {@linkcode TOKEN_IDS_KEY}.
 *
 * @example
 * ```ts
 * import { tokenIdsExtractor } from "./token_ids.ts";
 * const meta = await tokenIdsExtractor.extractMetadata({ parsedBody: { prompt_token_ids: [1, 2], choices: [{ token_ids: [3] }] } });
 * ```
 */
export const tokenIdsExtractor = {
  extractMetadata: (
    { parsedBody }: { parsedBody: unknown },
  ): Promise<SharedV4ProviderMetadata | undefined> => {
    const got = { prompt: null, completion: [], logprobs: [], tokens: [] };
    take(got, parsedBody);
    return Promise.resolve(metadataOf(got));
  },
  createStreamExtractor: () => {
    const got = {
      prompt: null as number[] | null,
      completion: [] as number[],
      logprobs: [] as number[],
      tokens: [] as string[],
    };
    return {
      processChunk: (chunk: unknown) => take(got, chunk),
      buildMetadata: () => metadataOf(got),
    };
  },
};
