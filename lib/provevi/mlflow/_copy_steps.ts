/**
 * A step of the run as a span of the copy shows it: its name (with a label for when the name is not plain), its
 * GenAI attributes (a model call's provider, reply and usage; a tool call's tool and error), and the attributes
 * cut to a level. What `bodies` adds to a span (the event's data, URIs and place) is here too.
 * @module
 */
import canonicalize from "canonicalize";
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import { attributeLevel } from "../telemetry/attributes.ts";
import { plainAttribute, RUN_MODEL_KEYS } from "../telemetry/plain_name.ts";
import { providerName } from "../telemetry/genai_conventions.ts";
import { finishReason } from "../telemetry/genai_messages.ts";

/** A step as a span shows it. */
export type Step = {
  name: string;
  label: string;
  declared: string[];
  failed: boolean;
  attributes: Record<string, Json>;
};

const str = (v: Json | undefined) => (typeof v === "string" ? v : null);

/** The step of a model call: its model in its name, its provider, reply and usage as GenAI attributes. */
function modelStep(d: EvidenceEvent["data"]): Step {
  const model = str(d.model);
  const attributes: Record<string, Json> = {
    "mlflow.spanType": JSON.stringify("CHAT_MODEL"),
    "gen_ai.operation.name": "chat",
  };
  // the conventions' well-known name (openai, anthropic), not the AI SDK's ID (openai-compatible.chat)
  if (str(d.provider)) attributes["gen_ai.provider.name"] = providerName(d.provider as string);
  if (model) attributes["gen_ai.request.model"] = model;
  if (str(d.answered_by)) attributes["gen_ai.response.model"] = d.answered_by!;
  if (str(d.finish_reason)) {
    attributes["gen_ai.response.finish_reasons"] = [finishReason(d.finish_reason as string)];
  }
  const counts: [string, string][] = [
    ["input_tokens", "gen_ai.usage.input_tokens"],
    ["output_tokens", "gen_ai.usage.output_tokens"],
    ["cache_read_tokens", "gen_ai.usage.cache_read.input_tokens"],
    ["cache_write_tokens", "gen_ai.usage.cache_creation.input_tokens"],
    ["reasoning_tokens", "gen_ai.usage.reasoning.output_tokens"],
  ];
  for (const [from, to] of counts) if (typeof d[from] === "number") attributes[to] = d[from]!;
  if (typeof d.cost === "string" && Number.isFinite(Number(d.cost))) {
    attributes["provrun.cost"] = Number(d.cost);
  }
  return {
    name: model ? `chat ${model}` : "chat",
    label: "chat",
    declared: model ? [model] : [],
    failed: false,
    attributes,
  };
}

/** The step of a tool call: its tool in its name, and its error as `error.type`. */
function toolStep(d: EvidenceEvent["data"]): Step {
  const tool = str(d.tool);
  const attributes: Record<string, Json> = {
    "mlflow.spanType": JSON.stringify("TOOL"),
    "gen_ai.operation.name": "execute_tool",
  };
  if (tool) attributes["gen_ai.tool.name"] = tool;
  if (str(d.call_id)) attributes["gen_ai.tool.call.id"] = d.call_id!;
  if (str(d.error)) attributes["error.type"] = d.error!;
  return {
    name: tool ? `execute_tool ${tool}` : "execute_tool",
    label: "execute_tool",
    declared: [],
    failed: str(d.error) !== null,
    attributes,
  };
}

/** The step a span stands for: its name, a label to show when the name is not plain, and its attributes. */
export function stepOf(e: EvidenceEvent): Step {
  switch (e.type) {
    case "model_called":
      return modelStep(e.data);
    case "tool_called":
      return toolStep(e.data);
    case "sandbox_started":
      return {
        name: "sandbox",
        label: "sandbox",
        declared: [],
        failed: false,
        attributes: { "mlflow.spanType": JSON.stringify("AGENT") },
      };
    case "context_resolved":
      return { name: "provcat.pin", label: "provcat.pin", declared: [], failed: false, attributes: {} };
    case "snapshot_materialized":
      return {
        name: "provcat.snapshot",
        label: "provcat.snapshot",
        declared: [],
        failed: false,
        attributes: { "mlflow.spanType": JSON.stringify("RETRIEVER") },
      };
    case "input_staged":
      return { name: "provrun.stage", label: "provrun.stage", declared: [], failed: false, attributes: {} };
    default:
      return { name: e.type, label: e.type, declared: [], failed: false, attributes: {} };
  }
}

/**
 * Cuts a step's attributes to a level: below `bodies`, a names attribute must be plain (a model's name may
 * have more than one `/`), a usage attribute a number; the copy's own `mlflow.spanType` label always goes.
 */
export function cutAttributes(attributes: Record<string, Json>, rank: number): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "__proto__") continue;
    if (rank === 2 || key === "mlflow.spanType") {
      out[key] = value;
      continue;
    }
    const at = attributeLevel(key, value);
    if (at === "names" && plainAttribute(key, value, { modelKeys: RUN_MODEL_KEYS })) out[key] = value;
    else if (at === "usage" && rank >= 1) out[key] = value;
  }
  return out;
}

/** A step's data, URIs and place in the record: what `bodies` adds to its span. */
export function bodyAttributes(e: EvidenceEvent): Record<string, Json> {
  const out: Record<string, Json> = {
    "provrun.seq": e.seq,
    "provrun.event": e.type,
    "provrun.component": e.component,
    "provrun.data": canonicalize(e.data) ?? "{}",
  };
  if (e.refs.length) out["provrun.refs"] = [...e.refs];
  return out;
}
