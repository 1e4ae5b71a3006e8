/**
 * {@linkcode ProvrunTracingProcessor}: a `TracingProcessor` of the OpenAI Agents SDK that writes the SDK's spans
 * into a run's evidence (the backend that runs an app with it is `agents_sdk_backend.ts`).
 *
 * Each SDK span becomes a step of the run (a span of the run's trace, under the SDK span's parent): a
 * `response` or `generation` span a `model_called` event (the request as the payload, the response as
 * `response_payload`, the usage in the one shape of every provider), a `function` span a `tool_called` (its
 * arguments as the payload, its output as `result_payload`), a failed one a `step_failed`; `handoff`, `guardrail`
 * and `custom` spans a `note_added` that says what the SDK did; `agent`, `task` and `turn` spans a span only. The
 * events are `parsed`: the SDK made the calls and reported them.
 * @module
 */
import type { Span as SdkSpan, SpanData, Trace as SdkTrace, TracingProcessor } from "@openai/agents-core";
import { SpanKind } from "@opentelemetry/api";
import type { Json } from "../../provevi/mod.ts";
import { usageFrom } from "../../provevi/cost/call_cost.ts";
import type { EvidenceRecorder, OpenStep } from "../run/recorder.ts";

/** The component the events of the SDK's spans are written by. */
export const AGENTS_SDK_COMPONENT = "AgentsSdk";

/** The most SDK spans open at once that get a step; past it, the rest of an app's spans get none. */
const MAX_OPEN = 10_000;

/** What the processor reads of an SDK span. */
interface AnySpan {
  readonly spanId: string;
  readonly parentId: string | null;
  readonly spanData: { type: string; [key: string]: unknown };
  readonly error: { message: string } | null;
}

/**
 * A `TracingProcessor` of the OpenAI Agents SDK that records the SDK's spans into a run's evidence.
 *
 * @example
 * ```ts
 * import { FileStore } from "@mahacata/prove/lib/provevi";
 * import { EvidenceRecorder, ProvrunTracingProcessor } from "@mahacata/prove/lib/provrun";
 * import assert from "node:assert/strict";
 *
 * await using store = new FileStore({ runs: await Deno.makeTempDir() });
 * const recorder = new EvidenceRecorder(await store.openRun("run-20261201T120000Z-0a0b0c0d"), {
 *   actor: "ada",
 *   mode: "strict",
 * });
 * const processor = new ProvrunTracingProcessor(recorder);
 * await processor.flush();
 * assert.equal(processor.spans, 0);
 * ```
 */
export class ProvrunTracingProcessor implements TracingProcessor {
  readonly #recorder: EvidenceRecorder;
  readonly #open = new Map<string, OpenStep>();
  #tail: Promise<void> = Promise.resolve();
  #spans = 0;

  /** @param recorder The run's recorder. */
  constructor(recorder: EvidenceRecorder) {
    this.#recorder = recorder;
  }

  /** The SDK spans recorded so far. */
  get spans(): number {
    return this.#spans;
  }

  /** A trace of the SDK is the run's own trace: nothing to record. */
  onTraceStart(_trace: SdkTrace): Promise<void> {
    return Promise.resolve();
  }

  /** See {@linkcode onTraceStart}. */
  onTraceEnd(_trace: SdkTrace): Promise<void> {
    return Promise.resolve();
  }

  /** Opens the span's step, under its parent's step when the SDK names one. */
  onSpanStart(span: SdkSpan<SpanData>): Promise<void> {
    const s = span as unknown as AnySpan;
    if (this.#open.size >= MAX_OPEN || this.#open.has(s.spanId)) return Promise.resolve();
    const parent = s.parentId === null ? undefined : this.#open.get(s.parentId);
    const start = () => this.#recorder.startStep({ component: AGENTS_SDK_COMPONENT, ...spanOf(s.spanData) });
    this.#open.set(s.spanId, parent ? parent.within(start) : this.#recorder.atTop(start));
    return Promise.resolve();
  }

  /** Writes the span's event, in the order the SDK ended them. */
  onSpanEnd(span: SdkSpan<SpanData>): Promise<void> {
    const s = span as unknown as AnySpan;
    const step = this.#open.get(s.spanId);
    if (step === undefined) return Promise.resolve();
    this.#open.delete(s.spanId);
    this.#spans++;
    const done = this.#tail.then(() => this.#end(s, step));
    this.#tail = done.catch(() => {});
    return done;
  }

  /** Waits until every span ended so far is written. */
  async flush(): Promise<void> {
    await this.#tail;
  }

  /** See {@linkcode flush}. */
  async forceFlush(): Promise<void> {
    await this.flush();
  }

  /** Writes what has ended; a span still open at the end of the run is not recorded. */
  async shutdown(_timeout?: number): Promise<void> {
    await this.flush();
    for (const step of this.#open.values()) step.span.end();
    this.#open.clear();
  }

  async #end(s: AnySpan, step: OpenStep): Promise<void> {
    const data = s.spanData;
    const error = s.error;
    const event = await eventOf(this.#recorder, data);
    if (event === null) {
      step.span.end();
      return;
    }
    if (error) {
      await step.fail(event.type, new SdkSpanError(error.message), {
        data: event.data,
        payload: event.payload ?? null,
      });
    } else await step.end(event.type, { ...event, confidence: "parsed" });
  }
}

/** An SDK span that ended with an error, as the step's error. */
class SdkSpanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AgentsSdkSpanError";
  }
}

const text = (v: unknown): string | null => (typeof v === "string" ? v : null);
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : {};

/** The span name and attributes of an SDK span's step, in the GenAI conventions. */
function spanOf(data: { type: string; [key: string]: unknown }): {
  spanName: string;
  kind?: SpanKind;
  attributes: Record<string, string>;
} {
  const name = text(data.name) ?? data.type;
  switch (data.type) {
    case "agent":
      return {
        spanName: `invoke_agent ${name}`,
        attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name },
      };
    case "function":
      return {
        spanName: `execute_tool ${name}`,
        attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name },
      };
    case "response":
    case "generation":
      return {
        spanName: "chat",
        kind: SpanKind.CLIENT,
        attributes: { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai" },
      };
    default:
      return { spanName: `agents_sdk.${data.type}${data.name ? ` ${name}` : ""}`, attributes: {} };
  }
}

/** The event of an SDK span: its type, data and payload. */
interface SdkEvent {
  type: string;
  data: { [key: string]: Json };
  payload?: string | null;
}

/** The event of an ended SDK span, or null for a span that is a span only. */
async function eventOf(
  recorder: EvidenceRecorder,
  data: { type: string; [key: string]: unknown },
): Promise<SdkEvent | null> {
  const from = { source: "agents_sdk", span_type: data.type };
  switch (data.type) {
    case "response":
      return await modelEvent(recorder, {
        input: responsesRequest(data._input, obj(data._response)),
        response: obj(data._response),
        from: { ...from, api: "openai-responses" },
      });
    case "generation":
      return await modelEvent(recorder, {
        input: data.input,
        response: { model: data.model, usage: data.usage, output: data.output },
        from,
      });
    case "function":
      return {
        type: "tool_called",
        data: {
          ...from,
          tool: text(data.name),
          executed_by: "agents_sdk",
          sandboxed: false,
          result_payload: await recorder.payload(text(data.output) ?? ""),
        },
        payload: await recorder.payload(text(data.input) ?? ""),
      };
    case "handoff":
      return {
        type: "note_added",
        data: {
          ...from,
          text: `handoff from ${text(data.from_agent) ?? "?"} to ${text(data.to_agent) ?? "?"}`,
          from_agent: text(data.from_agent),
          to_agent: text(data.to_agent),
        },
      };
    case "guardrail":
      return {
        type: "note_added",
        data: {
          ...from,
          text: `guardrail ${text(data.name) ?? "?"} ${data.triggered ? "triggered" : "passed"}`,
          guardrail: text(data.name),
          triggered: data.triggered === true,
        },
      };
    case "custom":
      return {
        type: "note_added",
        data: { ...from, text: `custom span ${text(data.name) ?? "?"}`, name: text(data.name) },
        payload: await recorder.payload(data.data ?? null),
      };
    default:
      return null;
  }
}

/**
 * The request of a `response` span as a Responses API body, so that readers of the gateway's bodies read it: the
 * SDK keeps the input apart from the rest, which the response repeats (model, instructions, tools). It is made
 * from the span, not the bytes sent; `data.request: "from_span"` says so.
 */
function responsesRequest(input: unknown, response: Record<string, unknown>): Record<string, unknown> {
  return {
    model: response.model ?? null,
    ...(typeof response.instructions === "string" ? { instructions: response.instructions } : {}),
    input: Array.isArray(input) ? input : typeof input === "string" ? [{ role: "user", content: input }] : [],
    ...(Array.isArray(response.tools) ? { tools: response.tools } : {}),
  };
}

/** A `model_called` event of a response or generation span: the agent backend's shape, from the SDK. */
async function modelEvent(
  recorder: EvidenceRecorder,
  call: { input: unknown; response: Record<string, unknown>; from: { [key: string]: Json } },
): Promise<SdkEvent> {
  const { response } = call;
  const usage = usageFrom("openai-responses", response.usage ?? {});
  const output = Array.isArray(response.output) ? response.output : [];
  const toolCalls = output.map(obj).filter((o) => o.type === "function_call").map((o) => ({
    id: text(o.call_id),
    name: text(o.name),
  }));
  return {
    type: "model_called",
    data: {
      ...call.from,
      provider: "openai",
      model: text(response.model),
      response_id: text(response.id),
      input_tokens: usage.input,
      output_tokens: usage.output,
      cache_read_tokens: usage.cacheRead,
      cache_write_tokens: usage.cacheWrite,
      reasoning_tokens: usage.reasoning,
      tool_calls: toolCalls,
      request: "from_span",
      response_payload: Object.keys(response).length ? await recorder.payload(response) : null,
    },
    payload: await recorder.payload(call.input ?? null),
  };
}
