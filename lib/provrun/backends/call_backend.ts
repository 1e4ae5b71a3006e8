/**
 * The `call` backend: one model call through the AI SDK, text or with the staged files as parts (images,
 * PDFs, text), streamed or not. The answer is written to the run's first output file.
 * @module
 */
import { generateText, type ModelMessage, streamText } from "ai";
import { AI_TELEMETRY_OFF } from "../telemetry/run_telemetry.ts";
import { extname, join } from "node:path";
import { type BackendJob, type BackendUpdate, InProcessBackend } from "./backend.ts";

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
      { component, spanName: `invoke_agent ${job.agent.name}` },
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

/** The model settings a run file may set: temperature, max_tokens, top_p, seed. */
export function callSettings(settings: Record<string, unknown> = {}): {
  temperature?: number;
  maxOutputTokens?: number;
  topP?: number;
  seed?: number;
} {
  const out: { temperature?: number; maxOutputTokens?: number; topP?: number; seed?: number } = {};
  if (typeof settings.temperature === "number") out.temperature = settings.temperature;
  if (typeof settings.max_tokens === "number") out.maxOutputTokens = settings.max_tokens;
  if (typeof settings.top_p === "number") out.topP = settings.top_p;
  if (typeof settings.seed === "number") out.seed = settings.seed;
  return out;
}

/** The user message: the prompt, then each staged file as a part (text inline, images and PDFs as files). */
async function renderContent(job: BackendJob) {
  const parts: ({ type: "text"; text: string } | {
    type: "file";
    data: Uint8Array;
    mediaType: string;
    filename: string;
  })[] = [
    { type: "text", text: job.prompt },
  ];
  for (const input of job.inputs) {
    if (input.kind !== "file") {
      parts.push({ type: "text", text: `<folder name="/input/${input.name}">staged, not inlined</folder>` });
      continue;
    }
    const media = MEDIA[extname(input.name).toLowerCase()];
    const bytes = await Deno.readFile(input.path);
    if (media) parts.push({ type: "file", data: bytes, mediaType: media, filename: input.name });
    else {parts.push({
        type: "text",
        text: `<file name="/input/${input.name}">\n${new TextDecoder().decode(bytes)}\n</file>`,
      });}
  }
  return parts;
}
