/**
 * The size limit of a model's answer (`agent.limits.model_bytes`): the providers' `fetch`, wrapped so that
 * a response body is counted while it arrives and cut as soon as it passes the limit, so a model (or a
 * server posing as one) that answers with hundreds of megabytes of text, or of a tool call's arguments, never
 * makes provr hold it all. The call then fails with {@linkcode PayloadTooLarge}, and the run with it.
 * @module
 */
import { ownChunk } from "../../provevi/guard/body_bytes.ts";
import { PayloadTooLarge } from "../run/errors.ts";

/** The default limit of one model response body: 32 MB. */
export const DEFAULT_MODEL_BYTES = 32 * 1024 * 1024;

/** What a provider's `fetch` setting takes. */
export type FetchFunction = typeof globalThis.fetch;

function tooLarge(size: number | string, limit: number): PayloadTooLarge {
  return new PayloadTooLarge(
    `the model's response passed ${limit} bytes (${size}); it was cut and refused: raise ` +
      `agent.limits.model_bytes if the model should answer with that much`,
  );
}

/**
 * A `fetch` whose responses are cut past `limit` bytes.
 *
 * @param limit The largest response body, in bytes.
 * @param options `fetch`: the one to wrap (the global one by default); `onRefused`: told of each refusal, so
 * that the caller can name the cause whatever the provider's library makes of the error.
 * @returns The wrapped `fetch`.
 * @example
 * ```ts
 * import { limitedFetch } from "./model_limit.ts";
 * const fetch = limitedFetch(1024 * 1024);
 * // createOpenAI({ apiKey, fetch })
 * ```
 */
export function limitedFetch(
  limit: number,
  options: { fetch?: FetchFunction; onRefused?: (error: PayloadTooLarge) => void } = {},
): FetchFunction {
  const inner = options.fetch ?? globalThis.fetch;
  return async (input, init) => {
    const response = await inner(input, init);
    const declared = Number(response.headers.get("content-length") ?? "");
    if (Number.isFinite(declared) && declared > limit) {
      await response.body?.cancel().catch(() => {});
      const error = tooLarge(`${declared} bytes declared`, limit);
      options.onRefused?.(error);
      throw error;
    }
    if (!response.body) return response;
    let seen = 0;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let step;
        try {
          step = await reader.read();
        } catch (error) {
          controller.error(error);
          return;
        }
        if (step.done) return controller.close();
        seen += step.value.byteLength;
        if (seen > limit) {
          const error = tooLarge(`at least ${seen} bytes`, limit);
          options.onRefused?.(error);
          controller.error(error);
          await reader.cancel(error).catch(() => {});
          return;
        }
        // the SDK collects a whole answer: a chunk of a byte must not hold its read's 64 KiB
        controller.enqueue(ownChunk(step.value));
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The PayloadTooLarge in an error's cause chain (the provider libraries wrap what `fetch` throws). */
export function payloadCause(error: unknown): PayloadTooLarge | null {
  for (let e = error, n = 0; e instanceof Error && n < 8; e = e.cause, n++) {
    if (e instanceof PayloadTooLarge) return e;
  }
  return null;
}

/** The parts of a language model that the limit's unwrapping touches. */
interface ModelCalls {
  doGenerate(options: unknown): PromiseLike<unknown>;
  doStream(options: unknown): PromiseLike<{ stream: ReadableStream<unknown> }>;
}

/**
 * A model whose calls fail with the {@linkcode PayloadTooLarge} itself, not the provider library's wrapper
 * of it, so that the record names the limit (the rest of the model is untouched).
 *
 * @param model A provider's language model.
 * @returns The same model, its `doGenerate` and `doStream` unwrapping the limit's error.
 * @example
 * ```ts ignore
 * import { namingLimit } from "./model_limit.ts";
 * const model = namingLimit(createOpenAI({ apiKey, fetch })("gpt-5"));
 * ```
 */
export function namingLimit<M extends object>(model: M): M {
  const calls = model as unknown as ModelCalls;
  const rethrow = (error: unknown): never => {
    throw payloadCause(error) ?? error;
  };
  return new Proxy(model, {
    get(target, prop) {
      if (prop === "doGenerate") {
        return (options: unknown) => Promise.resolve(calls.doGenerate.call(target, options)).catch(rethrow);
      }
      if (prop === "doStream") {
        return async (options: unknown) => {
          const result = await Promise.resolve(calls.doStream.call(target, options)).catch(rethrow);
          const reader = result.stream.getReader();
          const stream = new ReadableStream<unknown>({
            async pull(controller) {
              try {
                const step = await reader.read();
                if (step.done) return controller.close();
                const part = step.value as { type?: string; error?: unknown };
                const cause = part?.type === "error" ? payloadCause(part.error) : null;
                controller.enqueue(cause ? { ...part, error: cause } : part);
              } catch (error) {
                controller.error(payloadCause(error) ?? error);
              }
            },
            cancel: (reason) => reader.cancel(reason),
          });
          return { ...result, stream };
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
