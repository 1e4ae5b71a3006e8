/**
 * The conformance table: each span type of a run against the required and recommended attributes of the
 * OpenTelemetry GenAI semantic conventions, v1.41.1 (`model/gen-ai/spans.yaml` of
 * open-telemetry/semantic-conventions at v1.41.1: `span.gen_ai.inference.client`,
 * `span.gen_ai.execute_tool.internal`, `span.gen_ai.invoke_agent.internal`, `span.gen_ai.invoke_agent.client`,
 * `span.gen_ai.create_agent.client`), counted on what a destination at `bodies` receives from real runs.
 *
 * A conditionally required attribute counts only where its condition holds (`error.type` on a span that failed,
 * `gen_ai.request.stream` on a streamed call, `gen_ai.request.seed` when the run sets a seed, …); one whose
 * condition never holds in provrun (`gen_ai.request.choice.count`: the AI SDK asks for one choice;
 * `gen_ai.output.type`: no run asks for an output format; `gen_ai.data_source.id`; `gen_ai.agent.description`: a
 * run file has none) is listed and not counted. A recommended request setting counts on every span: the runs
 * set every setting a run file may set, but `top_k`, which OpenAI's API does not take (it counts where a run
 * sets it).
 * @module
 */
import type { ReceivedSpan } from "../../../lib/provevi/receiver/otlp_wire.ts";

/** When a conditional attribute applies to a span. */
export type Condition = (span: ReceivedSpan) => boolean;

/** One span type of the conventions. */
export interface SpanType {
  /** The conventions' span definition. */
  id: string;
  /** OTLP span kind: 1 internal, 3 client. */
  kind: number;
  required: string[];
  /** Conditionally required: the condition, or null where provrun never meets it. */
  conditional: Record<string, Condition | null>;
  /** Recommended: always counted, or counted where the condition holds. */
  recommended: Record<string, Condition | true>;
  /** Opt-in (the content), which only `bodies` receives: checked, not counted. */
  optIn: string[];
}

export const failed: Condition = (s) => s.status.code === 2;
const streamed: Condition = (s) => s.attributes["gen_ai.request.stream"] === true;
const always: Condition = () => true;
const hasServer: Condition = (s) => s.attributes["server.address"] !== undefined;

const REQUEST_SETTINGS = {
  "gen_ai.request.max_tokens": true,
  "gen_ai.request.temperature": true,
  "gen_ai.request.top_p": true,
  "gen_ai.request.stop_sequences": true,
  "gen_ai.request.frequency_penalty": true,
  "gen_ai.request.presence_penalty": true,
} as const;

const USAGE = {
  "gen_ai.usage.input_tokens": true,
  "gen_ai.usage.output_tokens": true,
  "gen_ai.usage.cache_read.input_tokens": true,
  "gen_ai.usage.cache_creation.input_tokens": true,
} as const;

/** The table, v1.41.1. */
export const TABLE: { version: string; spans: Record<string, SpanType> } = {
  version: "1.41.1",
  spans: {
    chat: {
      id: "span.gen_ai.inference.client",
      kind: 3,
      required: ["gen_ai.operation.name", "gen_ai.provider.name"],
      conditional: {
        "error.type": failed,
        "gen_ai.conversation.id": always, // the runs have a session
        "gen_ai.output.type": null,
        "gen_ai.request.choice.count": null,
        "gen_ai.request.model": always,
        "gen_ai.request.seed": always, // the runs set a seed
        "gen_ai.request.stream": streamed,
        "server.port": hasServer,
      },
      recommended: {
        ...REQUEST_SETTINGS,
        "gen_ai.request.top_k": (s) => s.attributes["gen_ai.request.top_k"] !== undefined,
        "gen_ai.response.finish_reasons": true,
        "gen_ai.response.id": true,
        "gen_ai.response.model": true,
        "gen_ai.response.time_to_first_chunk": streamed,
        ...USAGE,
        "gen_ai.usage.reasoning.output_tokens": always, // the server reports reasoning tokens
        "server.address": true,
      },
      optIn: [
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
      ],
    },
    execute_tool: {
      id: "span.gen_ai.execute_tool.internal",
      kind: 1,
      required: ["gen_ai.operation.name", "gen_ai.tool.name"],
      conditional: { "error.type": failed },
      recommended: {
        "gen_ai.tool.call.id": true,
        "gen_ai.tool.description": true,
        "gen_ai.tool.type": true,
      },
      optIn: ["gen_ai.tool.call.arguments"], // and the result, when the call did not fail
    },
    invoke_agent: {
      id: "span.gen_ai.invoke_agent.internal",
      kind: 1,
      required: ["gen_ai.operation.name", "gen_ai.provider.name"],
      conditional: {
        "error.type": failed,
        "gen_ai.request.model": always,
        "gen_ai.request.choice.count": null,
        "gen_ai.request.seed": always,
        "gen_ai.output.type": null,
        "gen_ai.conversation.id": always,
        "gen_ai.agent.id": always,
        "gen_ai.agent.name": always,
        "gen_ai.agent.description": null,
        "gen_ai.agent.version": always,
        "gen_ai.data_source.id": null,
      },
      recommended: { ...REQUEST_SETTINGS, "gen_ai.response.finish_reasons": true, ...USAGE },
      optIn: ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"],
    },
  },
};

/** The operations the conventions name: a span named for one is a GenAI span. */
export const GENAI_OPERATIONS = [
  "chat",
  "create_agent",
  "embeddings",
  "execute_tool",
  "generate_content",
  "invoke_agent",
  "invoke_workflow",
  "retrieval",
  "text_completion",
];

/** The request's settings: counted on every span of a run that sets them all, else where the request did. */
export const SETTING_KEYS: ReadonlySet<string> = new Set([
  ...Object.keys(REQUEST_SETTINGS),
  "gen_ai.request.top_k",
  "gen_ai.request.seed",
]);

/**
 * Where a request setting applies to a span: by default as the table says (the agent runs set every setting);
 * an agent program sets its own, so its runs count a setting where the program's request held it.
 */
export type Requested = (span: ReceivedSpan, key: string) => boolean;

/** The attributes of a span type that apply to one span, and those of them it has. */
export function counted(
  type: SpanType,
  span: ReceivedSpan,
  requested?: Requested,
): { applies: string[]; present: string[] } {
  const applies = [...type.required];
  const wanted = (key: string, when: boolean) =>
    requested && SETTING_KEYS.has(key) ? requested(span, key) : when;
  for (const [key, when] of Object.entries(type.conditional)) {
    if (wanted(key, when?.(span) ?? false)) applies.push(key);
  }
  for (const [key, when] of Object.entries(type.recommended)) {
    if (wanted(key, when === true || when(span))) applies.push(key);
  }
  return { applies, present: applies.filter((k) => span.attributes[k] !== undefined) };
}

/** Coverage of each span type over the spans received, and what was missing. */
export function coverage(spans: ReceivedSpan[], requested?: Requested) {
  const out: Record<string, { spans: number; applies: number; present: number; missing: Set<string> }> = {};
  for (const [op, type] of Object.entries(TABLE.spans)) {
    const of = spans.filter((s) => s.attributes["gen_ai.operation.name"] === op);
    const row = out[op] = { spans: of.length, applies: 0, present: 0, missing: new Set<string>() };
    for (const span of of) {
      const { applies, present } = counted(type, span, requested);
      row.applies += applies.length;
      row.present += present.length;
      for (const key of applies) if (!present.includes(key)) row.missing.add(key);
    }
  }
  return out;
}
