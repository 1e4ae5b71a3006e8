/**
 * The `test:` model route: a scripted language model that needs no network and no key. Each model request
 * takes the next turn of its script: a reply, tool calls, token usage, an error, or a stream cut part way.
 *
 * ```yaml
 * model: answer-1            # the model that "answered"
 * turns:
 *   - tool_calls: [{ name: read_file, args: { path: /input/revenue.csv } }]
 *     usage: { input: 30, output: 12 }
 *   - text: "Revenue grew 12% in Q3."
 *     usage: { input: 60, output: 9, cache_read: 20 }
 *   - error: { status: 503, message: overloaded }
 *   - provider_tools: [{ name: web_search, args: { q: revenue }, result: { hits: 3 } }]
 *     text: "The provider searched."   # a tool the provider ran: a call and its result in the reply
 *   - text: "a stream that breaks"
 *     cut_after: 2            # streamed: two pieces arrive, then the stream fails
 *   - text: "slow"
 *     delay_ms: 5000          # the model takes five seconds (an abort stops it)
 *   - text: "a few words at a time"
 *     piece_ms: 200           # streamed: each piece comes 200 ms after the one before
 * ```
 * @module
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { APICallError, type JSONValue } from "@ai-sdk/provider";
import { parse } from "yaml";
import { ProveviError } from "../../provevi/evidence/errors.ts";
import { readBoundedText } from "../../provevi/evidence/read_text.ts";

/** One turn of a script. */
export interface ScriptTurn {
  text?: string;
  tool_calls?: { name: string; args?: unknown; id?: string }[];
  /** Tools the provider ran: each gives a provider-executed tool call and its result in the reply. */
  provider_tools?: { name: string; args?: unknown; result?: unknown; id?: string; error?: boolean }[];
  usage?: { input?: number; output?: number; cache_read?: number; cache_write?: number };
  error?: { status?: number; message: string };
  cut_after?: number;
  finish?: string;
  /** Milliseconds the model takes before it answers (it stops early when the request is aborted). */
  delay_ms?: number;
  /** Milliseconds between the pieces of a streamed answer. */
  piece_ms?: number;
}

/** A model's script. */
export interface Script {
  model?: string;
  turns: ScriptTurn[];
}

const TURN_KEYS = new Set([
  "text",
  "tool_calls",
  "provider_tools",
  "usage",
  "error",
  "cut_after",
  "finish",
  "delay_ms",
  "piece_ms",
]);

/**
 * Checks a script, from a file or from a run file's `agent.script`.
 * @throws ProveviError naming each problem.
 */
export function checkScript(value: unknown, where: string): Script {
  const problems: string[] = [];
  const s = value as Script;
  if (typeof s !== "object" || s === null || !Array.isArray(s.turns) || s.turns.length === 0) {
    throw new ProveviError(`${where}: a script is a mapping with a list of turns`);
  }
  for (const key of Object.keys(s)) {
    if (key !== "model" && key !== "turns") problems.push(`unknown key "${key}"`);
  }
  s.turns.forEach((t, i) => {
    if (typeof t !== "object" || t === null) return void problems.push(`turns[${i}] is not a mapping`);
    for (const key of Object.keys(t)) {
      if (!TURN_KEYS.has(key)) problems.push(`turns[${i}] has an unknown key "${key}"`);
    }
    if (t.text === undefined && !t.tool_calls && !t.error) {
      problems.push(`turns[${i}] has no text, tool_calls or error`);
    }
    if (t.tool_calls && !Array.isArray(t.tool_calls)) problems.push(`turns[${i}].tool_calls is not a list`);
    if (t.provider_tools && !Array.isArray(t.provider_tools)) {
      problems.push(`turns[${i}].provider_tools is not a list`);
    }
  });
  if (problems.length) throw new ProveviError(`${where}: ${problems.join("; ")}`);
  return s;
}

/** Reads a script file. */
export async function loadScript(path: string): Promise<Script> {
  // A regular file only, bounded while it is read: a FIFO or /dev/zero never hangs the run.
  const text = await readBoundedText(path, { limit: 16 * 1024 * 1024, what: "the test model's script" });
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    throw new ProveviError(
      `the test model's script ${path} is not YAML: ${(error as Error).message.split("\n")[0]}`,
      { cause: error },
    );
  }
  return checkScript(value, path);
}

/**
 * A scripted model: a real AI SDK language model whose replies come from a script.
 *
 * @example
 * ```ts
 * import { generateText } from "ai";
 * import { ScriptedModel } from "./scripted_model.ts";
 * const model = new ScriptedModel({ turns: [{ text: "hello" }] }, { name: "hello.yaml" });
 * const { text } = await generateText({ model, prompt: "hi" }); // "hello"
 * ```
 */
export class ScriptedModel implements LanguageModelV4 {
  readonly specificationVersion = "v4" as const;
  readonly provider = "test";
  readonly modelId: string;
  readonly supportedUrls: Record<string, RegExp[]> = {};
  readonly #script: Script;
  #next = 0;
  /** The options of each request, for tests. */
  readonly calls: LanguageModelV4CallOptions[] = [];

  /** @param script The turns. @param options `name`: the model's ID (the script's name). */
  constructor(script: Script, options: { name: string }) {
    this.#script = script;
    this.modelId = options.name;
  }

  /**
   * Skips turns: the next request takes turn `n + 1` (from 1). A fork or a resume whose first `n` requests
   * were served from a run's evidence continues the script where the original run's model was.
   *
   * @param n How many turns the served requests took.
   * @throws RangeError for a count that is not a whole number from 0.
   */
  skipTurns(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) {
      throw new RangeError(`skipTurns takes a whole number from 0, not ${n}`);
    }
    this.#next = n;
  }

  #turn(options: LanguageModelV4CallOptions): ScriptTurn {
    this.calls.push(options);
    const turn = this.#script.turns[this.#next];
    if (!turn) {
      throw new APICallError({
        message: `the test model's script has ${this.#script.turns.length} turns, and request ${
          this.#next + 1
        } asked for another`,
        url: `test:${this.modelId}`,
        requestBodyValues: {},
        statusCode: 400,
        isRetryable: false,
      });
    }
    this.#next += 1;
    if (turn.error) {
      throw new APICallError({
        message: turn.error.message,
        url: `test:${this.modelId}`,
        requestBodyValues: {},
        statusCode: turn.error.status ?? 500,
        isRetryable: false,
      });
    }
    return turn;
  }

  #usage(turn: ScriptTurn): LanguageModelV4Usage {
    const u = turn.usage ?? {};
    const input = u.input ?? 0;
    return {
      inputTokens: {
        total: input,
        noCache: input - (u.cache_read ?? 0),
        cacheRead: u.cache_read ?? 0,
        cacheWrite: u.cache_write ?? 0,
      },
      outputTokens: { total: u.output ?? 0, text: u.output ?? 0, reasoning: 0 },
    };
  }

  #content(turn: ScriptTurn): LanguageModelV4Content[] {
    const content: LanguageModelV4Content[] = [];
    (turn.provider_tools ?? []).forEach((c, i) => {
      const toolCallId = c.id ?? `srv-${this.#next}-${i + 1}`;
      content.push({
        type: "tool-call",
        toolCallId,
        toolName: c.name,
        input: JSON.stringify(c.args ?? {}),
        providerExecuted: true,
        dynamic: true,
      }, {
        type: "tool-result",
        toolCallId,
        toolName: c.name,
        result: (c.result ?? null) as NonNullable<JSONValue>,
        ...(c.error ? { isError: true } : {}),
        dynamic: true,
      });
    });
    if (turn.text !== undefined) content.push({ type: "text", text: turn.text });
    (turn.tool_calls ?? []).forEach((c, i) =>
      content.push({
        type: "tool-call",
        toolCallId: c.id ?? `call-${this.#next}-${i + 1}`,
        toolName: c.name,
        input: JSON.stringify(c.args ?? {}),
      })
    );
    return content;
  }

  #finish(turn: ScriptTurn) {
    const unified = (turn.finish ?? (turn.tool_calls?.length ? "tool-calls" : "stop")) as "stop";
    return { unified, raw: unified };
  }

  /** Answers one request with the next turn. */
  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const turn = this.#turn(options);
    await wait(turn.delay_ms, options.abortSignal);
    return {
      content: this.#content(turn),
      finishReason: this.#finish(turn),
      usage: this.#usage(turn),
      warnings: [],
      response: {
        id: `resp-${this.#next}`,
        modelId: this.#script.model ?? this.modelId,
        timestamp: new Date(0),
      },
    };
  }

  /** Streams the next turn: the text in pieces of a few words, then the tool calls, then the finish. */
  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const turn = this.#turn(options);
    await wait(turn.delay_ms, options.abortSignal);
    const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }, {
      type: "response-metadata",
      id: `resp-${this.#next}`,
      modelId: this.#script.model ?? this.modelId,
      timestamp: new Date(0),
    }];
    let cutAt = -1;
    if (turn.text !== undefined) {
      parts.push({ type: "text-start", id: "t1" });
      const pieces = turn.text.match(/\S+\s*|\s+/g) ?? [""];
      pieces.forEach((delta, i) => {
        parts.push({ type: "text-delta", id: "t1", delta });
        if (turn.cut_after !== undefined && i + 1 === turn.cut_after) cutAt = parts.length;
      });
      parts.push({ type: "text-end", id: "t1" });
    }
    for (const c of this.#content(turn)) {
      if (c.type === "tool-call" || c.type === "tool-result") parts.push(c);
    }
    parts.push({ type: "finish", usage: this.#usage(turn), finishReason: this.#finish(turn) });
    if (turn.cut_after !== undefined && cutAt < 0) cutAt = Math.min(parts.length, 2 + turn.cut_after);
    const upTo = cutAt < 0 ? parts.length : cutAt;
    let at = 0;
    // Pulled one part at a time: a stream that errors in start() drops the parts still queued, so the pieces
    // before the cut would never arrive.
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      async pull(controller) {
        if (turn.piece_ms && at > 0 && parts[at]?.type === "text-delta") {
          await wait(turn.piece_ms, options.abortSignal).catch(() => {});
        }
        if (at < upTo) controller.enqueue(parts[at++]!);
        else if (cutAt < 0) controller.close();
        else controller.error(new Error(`the stream was cut after ${turn.cut_after} pieces`));
      },
    });
    return { stream };
  }
}

/** Waits, unless the signal aborts first. */
function wait(ms: number | undefined, signal: AbortSignal | undefined): Promise<void> {
  if (!ms) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
