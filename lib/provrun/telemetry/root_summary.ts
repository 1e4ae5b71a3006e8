/**
 * The run's root span (`invoke_agent <agent>`) as the sum of its model calls, as the GenAI conventions'
 * `invoke_agent` wants it: the token counts of every `chat` span of the run, the finish reasons of the last,
 * the request's settings of the first, and, when a destination receives content, the first call's messages,
 * system instructions and tool definitions (what the agent was given) and the last call's answer (what it
 * gave). Each `chat` span adds to the root while the root is still open; the root ends at the run's seal.
 * @module
 */
import type { Span } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";

/** The token counts the root adds up, by their attribute. */
const COUNTS = [
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
  "gen_ai.usage.cache_read.input_tokens",
  "gen_ai.usage.cache_creation.input_tokens",
  "gen_ai.usage.reasoning.output_tokens",
] as const;

/** What the root takes from the run's first model call: its settings, and what the agent was given. */
const FROM_FIRST = [
  "gen_ai.request.temperature",
  "gen_ai.request.max_tokens",
  "gen_ai.request.top_p",
  "gen_ai.request.seed",
  "gen_ai.request.stop_sequences",
  "gen_ai.request.frequency_penalty",
  "gen_ai.request.presence_penalty",
  "gen_ai.output.type",
  "gen_ai.input.messages",
  "gen_ai.system_instructions",
  "gen_ai.tool.definitions",
] as const;

/** What the root takes from the run's last model call: why it stopped, and what the agent gave. */
const FROM_LAST = ["gen_ai.response.finish_reasons", "gen_ai.output.messages"] as const;

/** An `invoke_agent` span that sums the model calls that end while it is open. */
interface AgentSum {
  span: Span;
  calls: number;
  totals: Map<string, number>;
}

/** What a nested agent (an agent program the run starts) takes from the run's root: the agent it runs. */
const FROM_ROOT = ["gen_ai.agent.id", "gen_ai.agent.version"] as const;

/**
 * Adds each of the run's model calls to its root span, and to each other `invoke_agent` span of provrun's that
 * is open when the call ends (an agent program's, which runs the run's agent: it takes the root's agent ID and
 * version too).
 *
 * @example
 * ```ts
 * import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
 * import { RootSummary } from "./root_summary.ts";
 * const summary = new RootSummary();
 * const root = new BasicTracerProvider().getTracer("t").startSpan("invoke_agent q");
 * summary.started(root);
 * // summary.ended(chatSpan) for each chat span that ends; then root.end()
 * ```
 */
export class RootSummary {
  #root: Span | null = null;
  #trace: string | null = null;
  readonly #agents: AgentSum[] = [];

  /**
   * Takes a span of provrun's that starts: the first one without a parent is the run's root; a later
   * `invoke_agent` span of its trace sums the calls too.
   */
  started(span: Span & { parentSpanContext?: unknown }): void {
    if (this.#root === null) {
      if (span.parentSpanContext) return;
      this.#root = span;
      this.#trace = span.spanContext().traceId;
      this.#agents.push({ span, calls: 0, totals: new Map() });
      return;
    }
    const a = (span as unknown as Partial<ReadableSpan>).attributes ?? {};
    if (a["gen_ai.operation.name"] !== "invoke_agent" || span.spanContext().traceId !== this.#trace) return;
    const rootAttributes = (this.#root as unknown as Partial<ReadableSpan>).attributes ?? {};
    for (const key of FROM_ROOT) {
      const value = rootAttributes[key];
      if (value !== undefined && a[key] === undefined) span.setAttribute(key, value);
    }
    if (this.#agents.length < 100) this.#agents.push({ span, calls: 0, totals: new Map() });
  }

  /** Takes a span of provrun's that ended: a `chat` span of the root's trace adds to each open agent span. */
  ended(span: ReadableSpan): void {
    const a = span.attributes;
    if (this.#root === null || a["gen_ai.operation.name"] !== "chat") return;
    if (span.spanContext().traceId !== this.#trace) return;
    for (const agent of this.#agents) if (agent.span.isRecording()) add(agent, a);
  }
}

/** Adds one model call's attributes to an agent span. */
function add(agent: AgentSum, a: ReadableSpan["attributes"]): void {
  const { span, totals } = agent;
  agent.calls++;
  for (const key of COUNTS) {
    const value = a[key];
    if (typeof value !== "number") continue;
    const total = (totals.get(key) ?? 0) + value;
    totals.set(key, total);
    span.setAttribute(key, total);
  }
  const take = (keys: readonly string[]) => {
    for (const key of keys) {
      const value = a[key];
      if (value !== undefined) span.setAttribute(key, value);
    }
  };
  if (agent.calls === 1) take(FROM_FIRST);
  take(FROM_LAST);
}
