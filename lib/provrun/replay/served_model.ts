/**
 * A language model that answers from a run's evidence: call k gets the answer recorded for call k, streamed or
 * not, after its request is compared with the recorded one (the options as the capture records them, compared
 * as JSON). A call past the served ones goes to a live model (a fork from step N, a resume past the cut), or,
 * in a replay, is a divergence. Every served answer carries where it came from, which the capture records as
 * `data.served_from`.
 * @module
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
} from "@ai-sdk/provider";
import type { Json } from "../../provevi/evidence/event.ts";
import { sha256Hex } from "../../provevi/evidence/hash.ts";
import { jsonDifference, shownValue } from "../../provevi/diff/json_difference.ts";
import { callParamsJson } from "../backends/call_request.ts";
import { ScriptedModel } from "../backends/scripted_model.ts";
import { TOKEN_IDS_KEY } from "../backends/token_ids.ts";
import { SERVED_FROM, type ServedFrom } from "../run/run_part.ts";
import type { Journal, RecordedCall } from "./journal.ts";
import { ReplayDiverged, type ServedDivergence } from "./replay_errors.ts";

/** Options of {@linkcode ServedModel}. */
export interface ServedModelOptions {
  /** The model that answers the calls past the served ones, or null (a replay: such a call is a divergence). */
  live: LanguageModelV4 | null;
  /** How many calls are served, from the first (a fork at step N serves N - 1); all recorded ones by default. */
  served?: number;
  /** Compare each served request with the recorded one (a replay, a resume); a fork serves without comparing. */
  compare: boolean;
  /** Called at the first divergence, before the call throws it. */
  onDiverged?: (error: ReplayDiverged) => void;
}

/** A model whose first calls are answered from a run's evidence. */
export class ServedModel implements LanguageModelV4 {
  readonly specificationVersion = "v4" as const;
  readonly supportedUrls: Record<string, RegExp[]> = {};
  readonly #journal: Journal;
  readonly #options: ServedModelOptions;
  readonly #served: number;
  #next = 0;
  #answered = 0;
  #wentLive = false;

  /** @param journal The run's evidence. @param options The live model, how many calls to serve, whether to compare. */
  constructor(journal: Journal, options: ServedModelOptions) {
    this.#journal = journal;
    this.#options = options;
    this.#served = Math.min(options.served ?? journal.calls.length, journal.calls.length);
  }

  /** How many calls were answered from the evidence so far (a call that diverged is not). */
  get servedCount(): number {
    return this.#answered;
  }

  /** How many calls were asked for so far: the model step being answered, from 1 (0 before the first). */
  get calls(): number {
    return this.#next;
  }

  /** How many calls are served, from the first. */
  get served(): number {
    return this.#served;
  }

  /** The provider of the next call: the recorded one while calls are served, then the live model's. */
  get provider(): string {
    const call = this.#journal.calls[this.#next];
    return this.#next < this.#served && call
      ? String(call.event.data.provider)
      : this.#options.live?.provider ?? "replay";
  }

  /** The model of the next call, as for {@linkcode provider}. */
  get modelId(): string {
    const call = this.#journal.calls[this.#next];
    return this.#next < this.#served && call
      ? String(call.event.data.model)
      : this.#options.live?.modelId ?? "replay";
  }

  /** Answers a call that does not stream. */
  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const call = await this.#take(options, false);
    if (!call) return await this.#goLive().doGenerate(options);
    const served = this.#from(call);
    if (call.event.type !== "model_called") throw failedWith(call, served);
    const reply = call.reply as unknown as GenerateReply;
    const response = reply.response ?? {};
    return {
      content: reply.content as LanguageModelV4GenerateResult["content"],
      finishReason: reply.finish_reason as LanguageModelV4GenerateResult["finishReason"],
      usage: reply.usage as LanguageModelV4GenerateResult["usage"],
      warnings: [],
      response: {
        ...(response.id !== undefined ? { id: response.id } : {}),
        ...(response.model !== undefined ? { modelId: response.model } : {}),
        ...(response.body !== undefined ? { body: response.body } : {}),
      },
      ...(call.wire !== undefined ? { request: { body: call.wire } } : {}),
      ...(call.tokens !== null ? { providerMetadata: { [TOKEN_IDS_KEY]: call.tokens } } : {}),
      [SERVED_FROM]: served,
    } as LanguageModelV4GenerateResult;
  }

  /** Answers a call that streams: the recorded parts, the text where it began, as they were recorded. */
  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const call = await this.#take(options, true);
    if (!call) return await this.#goLive().doStream(options);
    const served = this.#from(call);
    const reply = call.reply as unknown as StreamReply | null;
    // A call that failed before it streamed anything threw at once; one that failed part way gave its parts.
    if (reply === null) throw failedWith(call, served);
    const parts = streamParts(reply);
    const thrown = call.event.type === "step_failed" && !parts.some((p) => p.type === "error");
    let at = 0;
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      pull(controller) {
        if (at < parts.length) controller.enqueue(parts[at++]!);
        else if (thrown) controller.error(failedWith(call, served));
        else controller.close();
      },
    });
    return {
      stream,
      ...(call.wire !== undefined ? { request: { body: call.wire } } : {}),
      [SERVED_FROM]: served,
    } as LanguageModelV4StreamResult;
  }

  #from(call: RecordedCall): ServedFrom {
    return { run_id: this.#journal.runId, seq: call.event.seq };
  }

  /** The live model, told how far the served calls took its script when it is a scripted one. */
  #goLive(): LanguageModelV4 {
    const live = this.#options.live!;
    if (!this.#wentLive && live instanceof ScriptedModel) live.skipTurns(this.#served);
    this.#wentLive = true;
    return live;
  }

  /** The recorded call for this request, compared with it; null when the request goes live. */
  async #take(options: LanguageModelV4CallOptions, streamed: boolean): Promise<RecordedCall | null> {
    const k = this.#next++;
    const call = this.#journal.calls[k];
    if (k >= this.#served || !call) {
      if (this.#options.live) return null;
      this.#diverge({
        step: k + 1,
        what: "steps",
        path: null,
        detail: `the run made ${this.#journal.calls.length} model call${
          this.#journal.calls.length === 1 ? "" : "s"
        }, and the replay asks for call ${k + 1}`,
      });
    }
    if (!this.#options.compare) {
      this.#answered += 1;
      return call!;
    }
    if (call!.streamed !== streamed) {
      this.#diverge({
        step: k + 1,
        what: "settings",
        path: null,
        detail: `model call ${k + 1} ${streamed ? "streams" : "does not stream"}, and the run's ${
          call!.streamed ? "streamed" : "did not"
        } (agent.stream)`,
      });
    }
    const now = await callParamsJson(options, (bytes) => Promise.resolve(sha256Hex(bytes)));
    const d = jsonDifference(call!.params, now, "params");
    if (d) {
      const what = /^params\.prompt\b/.test(d.path)
        ? "prompt"
        : /^params\.tool/.test(d.path)
        ? "tools"
        : "settings";
      this.#diverge({
        step: k + 1,
        what,
        path: d.path,
        detail: `the request of model call ${k + 1} differs from the run's at ${d.path}: ` +
          `${shownValue(d.a)} recorded, ${shownValue(d.b)} now`,
      });
    }
    this.#answered += 1;
    return call!;
  }

  #diverge(divergence: ServedDivergence): never {
    const error = new ReplayDiverged(divergence);
    this.#options.onDiverged?.(error);
    throw error;
  }
}

/** A recorded answer of a call that did not stream, as the capture stored it. */
interface GenerateReply {
  content: unknown[];
  finish_reason: unknown;
  usage: unknown;
  response?: { id?: string; model?: string; body?: unknown };
}

/** A recorded answer of a call that streamed, as the capture stored it. */
interface StreamReply {
  text?: string;
  /** The text of each block by its ID, when the answer had more than one. */
  text_blocks?: Record<string, string>;
  parts?: Record<string, Json>[];
}

/**
 * The parts of a recorded stream, in the order they came: each text block's text as one piece just after its
 * start (the capture keeps the text, not its pieces), times as dates, errors as errors.
 */
function streamParts(reply: StreamReply): LanguageModelV4StreamPart[] {
  const out: LanguageModelV4StreamPart[] = [];
  let placed = false;
  for (const raw of reply.parts ?? []) {
    let part = raw as unknown as LanguageModelV4StreamPart;
    if (raw.type === "response-metadata" && typeof raw.timestamp === "string") {
      part = { ...raw, timestamp: new Date(raw.timestamp) } as unknown as LanguageModelV4StreamPart;
    } else if (raw.type === "error") {
      const e = (raw.error ?? {}) as { name?: string; message?: string };
      part = { type: "error", error: named(e.name ?? "Error", e.message ?? "") };
    }
    if (raw.type === "finish" && !placed && reply.text) {
      out.push({ type: "text-delta", id: "text", delta: reply.text }); // a text without a start, as it came
      placed = true;
    }
    out.push(part);
    if (raw.type === "text-start") {
      const id = String(raw.id);
      const text = reply.text_blocks ? reply.text_blocks[id] ?? "" : placed ? "" : reply.text ?? "";
      if (text) out.push({ type: "text-delta", id, delta: text });
      placed = true;
    }
  }
  return out;
}

function named(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

/** The error a recorded call failed with, as it was recorded, naming where it was served from. */
function failedWith(call: RecordedCall, served: ServedFrom): Error {
  const error = named(String(call.event.data.error), String(call.event.data.message ?? ""));
  return Object.assign(error, { [SERVED_FROM]: served });
}
