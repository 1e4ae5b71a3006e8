/**
 * The `call` backend: one model call through the AI SDK, text or with the staged files as parts (images,
 * PDFs, text), streamed or not. The answer is written to the run's first output file.
 * @module
 */
import { generateText, type ModelMessage, streamText } from "ai";
import { AI_TELEMETRY_OFF } from "../telemetry/run_telemetry.ts";
import { extname, join } from "node:path";
import { type BackendJob, type BackendUpdate, InProcessBackend } from "./backend.ts";
import { readCapped } from "../../provevi/evidence/open_file.ts";
import { PayloadTooLarge } from "../run/errors.ts";

const MEDIA: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".pdf": "application/pdf",
};

/**
 * The call backend.
 *
 * @example
 * ```ts
 * import { CallBackend } from "./call_backend.ts";
 * const backend = new CallBackend();
 * ```
 */
export class CallBackend extends InProcessBackend {
  readonly name = "call";

  /** Renders the prompt, calls the model once, writes the answer. */
  protected async work(
    job: BackendJob,
    signal: AbortSignal,
    emit: (u: BackendUpdate) => void,
  ): Promise<string> {
    const { recorder } = job.ctx;
    const component = "CallBackend";
    const stream = job.agent.stream ?? false;
    await recorder.step(
      "sandbox_started",
      // the start of a call is no GenAI operation: the run's root is its invoke_agent, its model call its chat
      { component, spanName: "provrun.sandbox" },
      () =>
        Promise.resolve({
          data: {
            backend: "call",
            model: job.agent.model,
            streamed: stream,
            session_id: job.sessionId ?? null,
            tools: [],
            permissions: { note: "the call backend runs no tools" },
            unsandboxed: [],
            ...job.facts,
          },
        }),
    );
    const content = await renderContent(job);
    const promptText = [job.agent.instructions ? `[system]\n${job.agent.instructions}\n` : "", job.prompt]
      .join("");
    await recorder.step("prompt_rendered", { component }, async () => ({
      payload: await recorder.payload(promptText),
      data: { chars: promptText.length, files: job.inputs.map((i) => i.name) },
    }));
    const settings = callSettings(job.agent.settings);
    const messages: ModelMessage[] = [{ role: "user", content }];
    let text: string;
    if (stream) {
      const result = streamText({
        model: job.model,
        ...(job.agent.instructions ? { system: job.agent.instructions } : {}),
        messages,
        abortSignal: signal,
        maxRetries: 0,
        ...settings,
        telemetry: AI_TELEMETRY_OFF, // after the settings, so nothing turns the AI SDK's telemetry on
      });
      let failure: unknown = null;
      for await (const part of result.fullStream) {
        if (part.type === "text-delta") emit({ type: "text", text: part.text });
        if (part.type === "error") failure = part.error;
      }
      if (failure) throw failure;
      text = await result.text;
    } else {
      const result = await generateText({
        model: job.model,
        ...(job.agent.instructions ? { system: job.agent.instructions } : {}),
        messages,
        abortSignal: signal,
        maxRetries: 0,
        ...settings,
        telemetry: AI_TELEMETRY_OFF, // after the settings, so nothing turns the AI SDK's telemetry on
      });
      text = result.text;
      emit({ type: "text", text });
    }
    const out = join(job.ctx.folder, "output", job.outputs[0] ?? "answer.txt");
    await Deno.mkdir(join(out, ".."), { recursive: true });
    await Deno.writeTextFile(out, text);
    await recorder.step(
      "sandbox_completed",
      { component },
      () => Promise.resolve({ data: { status: "ok", chars: text.length } }),
    );
    return text;
  }
}

/** The model settings a run file may set, and the AI SDK's name of each. */
const SETTINGS: readonly [string, keyof CallSettings][] = [
  ["temperature", "temperature"],
  ["max_tokens", "maxOutputTokens"],
  ["top_p", "topP"],
  ["top_k", "topK"],
  ["seed", "seed"],
  ["frequency_penalty", "frequencyPenalty"],
  ["presence_penalty", "presencePenalty"],
];

/** The AI SDK's settings of a call that a run file may set. */
export interface CallSettings {
  temperature?: number;
  maxOutputTokens?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  stopSequences?: string[];
}

/**
 * The model settings a run file may set: temperature, max_tokens, top_p, top_k, seed, frequency_penalty,
 * presence_penalty (numbers) and stop_sequences (texts); any other key, or a value of another type, is left
 * out.
 *
 * @example
 * ```ts
 * import { callSettings } from "./call_backend.ts";
 * callSettings({ temperature: 0, max_tokens: 512, stop_sequences: ["END"] });
 * // { temperature: 0, maxOutputTokens: 512, stopSequences: ["END"] }
 * ```
 */
export function callSettings(settings: Record<string, unknown> = {}): CallSettings {
  const out: CallSettings = {};
  for (const [from, to] of SETTINGS) {
    const value = settings[from];
    if (typeof value === "number" && Number.isFinite(value)) (out as Record<string, number>)[to] = value;
  }
  const stops = settings.stop_sequences;
  if (Array.isArray(stops) && stops.length && stops.every((s) => typeof s === "string")) {
    out.stopSequences = [...stops];
  }
  return out;
}

/** The user message: the prompt, then each staged file as a part (text inline, images and PDFs as files). */
/**
 * The most bytes of inputs a call inlines in all: more than any model takes in one request (a million tokens is
 * a few MB of text). An input of gigabytes was read whole into the request.
 */
export const INLINE_MAX_BYTES = 32 * 1024 * 1024;

async function renderContent(job: BackendJob) {
  const parts: ({ type: "text"; text: string } | {
    type: "file";
    data: Uint8Array;
    mediaType: string;
    filename: string;
  })[] = [
    { type: "text", text: job.prompt },
  ];
  let inlined = 0;
  for (const input of job.inputs) {
    if (input.kind !== "file") {
      parts.push({ type: "text", text: `<folder name="/input/${input.name}">staged, not inlined</folder>` });
      continue;
    }
    const media = MEDIA[extname(input.name).toLowerCase()];
    const size = (await Deno.lstat(input.path)).size;
    if (size > INLINE_MAX_BYTES - inlined) {
      throw new PayloadTooLarge(
        `input ${input.name} is ${size} bytes: the call backend inlines at most ${INLINE_MAX_BYTES} bytes of ` +
          `inputs in all${
            inlined ? ` (${inlined} before it)` : ""
          }. Use backend: agent, whose tools read an ` +
          `input a piece at a time`,
      );
    }
    // no link followed, no FIFO waited on, and no more read than the bound if it grew since the look
    const bytes = await readCapped(input.path, INLINE_MAX_BYTES - inlined);
    inlined += bytes.length;
    if (media) parts.push({ type: "file", data: bytes, mediaType: media, filename: input.name });
    else {parts.push({
        type: "text",
        text: `<file name="/input/${input.name}">\n${new TextDecoder().decode(bytes)}\n</file>`,
      });}
  }
  return parts;
}
