/**
 * What the copy of a run in MLflow holds at a level (provevi-reference.txt, "What the copy holds"): the
 * experiment's name, the run's tags, settings and metrics, its inputs as datasets, the spans of its trace and
 * the assessments on it. Built from the evidence alone, so the copy can be rebuilt at any time; it touches no
 * server.
 * @module
 */
import canonicalize from "canonicalize";
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import { ProveviError } from "../evidence/errors.ts";
import { sha256Hex } from "../evidence/hash.ts";
import type { RunRecord } from "../evidence/record.ts";
import type { Assessment } from "../store/assess.ts";
import { withoutSecrets } from "../experiments/agent_class.ts";
import { attributeLevel, type Level, levelRank } from "../telemetry/attributes.ts";
import { experimentAssessmentTags } from "./experiment_tags.ts";
import {
  plainAttribute,
  plainExperiment,
  plainName,
  plainSpanName,
  RUN_MODEL_KEYS,
} from "../telemetry/plain_name.ts";
import type { Destination } from "../telemetry/policy_types.ts";
import type { TelemetryPolicy } from "../telemetry/policy.ts";
import { providerName } from "../telemetry/genai_conventions.ts";
import { finishReason } from "../telemetry/genai_messages.ts";
import { experimentName } from "./experiment_name.ts";

/** The tag that names the provrun run a copy is of; provevi finds a copy by it. */
export const RUN_ID_TAG = "provrun.run_id";
/** The tag a copy's run has from the moment it is made until it is whole. */
export const UNFINISHED_TAG = "provevi.copy.unfinished";

/** One span of the copy's trace, with times in nanoseconds since the epoch. */
export interface CopySpan {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** The OpenTelemetry span kind (0 unspecified … 5 consumer). */
  kind: number;
  startNanos: bigint;
  endNanos: bigint;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  attributes: Record<string, Json>;
  events: { name: string; timeNanos: bigint; attributes: Record<string, Json> }[];
}

/** One input of the run, as an MLflow dataset. */
export interface CopyDataset {
  name: string;
  /** 32 hex digits of the SHA-256 of the name and the source. */
  digest: string;
  sourceType: string;
  /** A JSON object: the input's SHA-256, and at `bodies` its URI and pinned URI. */
  source: string;
}

/** One assessment of the store, as an MLflow feedback on the trace or one of its spans. */
export interface CopyAssessment {
  name: string;
  value: Json;
  spanId: string | null;
  source: string;
  rationale: string | null;
  createdMillis: number;
}

/** What the copy of one run holds at one level. */
export interface CopyContent {
  runId: string;
  level: Level;
  experiment: string;
  /** The run's start and end, in milliseconds since the epoch. */
  startMillis: number;
  endMillis: number;
  status: "FINISHED" | "FAILED";
  tags: Record<string, string>;
  params: Record<string, string>;
  metrics: Record<string, number>;
  datasets: CopyDataset[];
  /** provrun's trace ID, 32 hex digits; MLflow names the trace `tr-<traceId>`. */
  traceId: string;
  spans: CopySpan[];
  assessments: CopyAssessment[];
  /** The experiment's assessments, as tags of the MLflow experiment (`provevi.assessment.<id>`). */
  experimentTags: Record<string, string>;
}

/** What {@linkcode copyContent} needs besides the events. */
export interface CopyContentOptions {
  /** The level of the destination. */
  level: Level;
  /** The destination, to ask the policy which libraries may feed it. */
  destination: Destination;
  /** The policy, for the libraries whose spans (`span_recorded`) may go. */
  policy: TelemetryPolicy;
  /** The run, to read payloads at `bodies`. */
  record: RunRecord;
  /** The store's assessments of the run. */
  assessments?: readonly Assessment[];
  /** The store's assessments of the run's experiment (as a whole and of each version). */
  experimentAssessments?: readonly Assessment[];
}

/**
 * The root span's input, as MLflow's viewer shows it well: the prompt the agent was given (the text of
 * `prompt_rendered`) and the run's settings (`run_created`'s data), as JSON. Not the run file: MLflow renders a
 * text input as Markdown, so the YAML's `#` comments became headings.
 */
async function rootInput(
  events: readonly EvidenceEvent[],
  payload: (digest: unknown) => Promise<Json | undefined>,
): Promise<Json> {
  const rendered = events.find((e) => e.type === "prompt_rendered");
  const prompt = rendered ? await payload(rendered.payload) : undefined;
  return { prompt: prompt ?? null, settings: events[0]!.data };
}

/** MLflow refuses a param's value longer than this. */
const MAX_PARAM = 6000;
const MAX_TAG = 8000;

/**
 * Builds what the copy of a sealed run holds at a level.
 *
 * @param events The run's events, verified.
 * @param options The level, destination, policy, record and assessments.
 * @returns The copy's content.
 * @throws ProveviError when the run has no `run_created` event with a trace ID, or names no experiment or agent
 *   class.
 * @example
 * ```ts
 * import { copyContent } from "./copy_content.ts";
 * // const content = await copyContent(events, { level: "usage", destination, policy, record });
 * ```
 */
export async function copyContent(
  events: readonly EvidenceEvent[],
  options: CopyContentOptions,
): Promise<CopyContent> {
  const { level } = options;
  const rank = levelRank(level);
  const created = events[0];
  if (!created || created.type !== "run_created" || created.trace_id === null || created.span_id === null) {
    throw new ProveviError(
      `run ${
        events[0]?.run_id ?? "?"
      } has no trace: its first event is not a run_created with a trace ID and a span ID, so MLflow cannot show it`,
    );
  }
  const runId = created.run_id;
  const experiment = experimentName(created.data, level);
  if (experiment === null) {
    throw new ProveviError(
      `run ${runId} names no experiment and no agent class (org, domain, env and agent), so the copy has no MLflow experiment to go in`,
    );
  }
  const failed = events.some((e) => e.type === "run_failed");
  const payload = async (digest: unknown): Promise<Json | undefined> => {
    if (typeof digest !== "string") return undefined;
    const text = new TextDecoder().decode(await options.record.payload(digest));
    try {
      return JSON.parse(text) as Json;
    } catch {
      return text;
    }
  };

  // The run: tags, settings and metrics.
  const tags: Record<string, string> = { [RUN_ID_TAG]: runId, "provevi.copy.level": level };
  for (const key of ["org", "domain", "env"]) {
    const value = created.data[key];
    if (typeof value === "string" && (rank === 2 || plainName(value))) {
      tags[`provrun.${key}`] = cut(value, MAX_TAG);
    }
  }
  tags["provrun.status"] = failed ? "failed" : "completed";
  const params = settings(created.data, rank);
  const metrics: Record<string, number> = {};
  if (rank >= 1) Object.assign(metrics, usageMetrics(events));

  const datasets = datasetsOf(events, rank);

  // The trace.
  const root = await rootSpan(events, { rank, runId, failed, payload });
  const { spans, order } = await traceSpans(events, root, { rank, runId, payload, options });

  return {
    runId,
    level,
    experiment,
    startMillis: Number(root.startNanos / 1_000_000n),
    endMillis: Number(root.endNanos / 1_000_000n),
    status: failed ? "FAILED" : "FINISHED",
    tags,
    params,
    metrics,
    datasets,
    traceId: created.trace_id,
    spans: order,
    assessments: copyAssessments(options.assessments ?? [], events, spans, rank),
    experimentTags: experimentAssessmentTags(options.experimentAssessments ?? [], level),
  };
}

/** The spans of the trace under its root: each step's, and each library span the policy lets through. */
async function traceSpans(
  events: readonly EvidenceEvent[],
  root: CopySpan,
  making: SpanMaking & { options: CopyContentOptions },
): Promise<{ spans: Map<string, CopySpan>; order: CopySpan[] }> {
  const { rank, runId, payload, options } = making;
  const rootId = root.spanId;
  const created = events[0]!;
  const spans = new Map<string, CopySpan>([[rootId, root]]);
  const order: CopySpan[] = [root];
  for (const e of events) {
    if (e.type === "span_recorded") {
      const span = await librarySpan(e, options, rank, payload);
      if (span !== null && !spans.has(span.spanId)) {
        spans.set(span.spanId, span);
        order.push(span);
      }
      continue;
    }
    const ownSpan = e.span_id !== null && (e.span_id !== rootId || e.started_at !== null);
    if (!ownSpan || e.span_id === rootId) {
      if (rank === 2 && e.seq !== created.seq) {
        root.events.push({
          name: e.type,
          timeNanos: nanos(e.time),
          attributes: bodyAttributes(e),
        });
      }
      continue;
    }
    const spanId = e.span_id!;
    let span = spans.get(spanId);
    if (span === undefined) {
      span = {
        spanId,
        parentSpanId: e.parent_span_id ?? rootId,
        name: "",
        kind: 0,
        startNanos: nanos(e.started_at ?? e.time),
        endNanos: nanos(e.time),
        status: { code: 1, message: "" },
        attributes: {},
        events: [],
      };
      spans.set(spanId, span);
      order.push(span);
    }
    const start = nanos(e.started_at ?? e.time), end = nanos(e.time);
    if (start < span.startNanos) span.startNanos = start;
    if (end > span.endNanos) span.endNanos = end;
    await addStep(span, e, { rank, runId, payload });
  }
  for (const span of order) if (span.endNanos < span.startNanos) span.endNanos = span.startNanos;
  // A span whose parent is not in the copy (a library span the policy keeps out) hangs under the root.
  for (const span of order) {
    if (span.parentSpanId !== null && !spans.has(span.parentSpanId)) span.parentSpanId = rootId;
  }
  return { spans, order };
}

/** The run's inputs as MLflow datasets: each input's SHA-256, and at `bodies` its URI and pinned URI. */
function datasetsOf(events: readonly EvidenceEvent[], rank: number): CopyDataset[] {
  const datasets: CopyDataset[] = [];
  const original = new Map<string, string>();
  for (const e of events) {
    if (e.type === "context_resolved" && typeof e.data.pinned === "string" && e.refs[0]) {
      original.set(e.data.pinned, e.refs[0]);
    }
  }
  for (const e of events) {
    if (e.type !== "input_staged") continue;
    const sha = typeof e.data.sha256 === "string" ? e.data.sha256 : null;
    if (sha === null) continue;
    const raw = typeof e.data.name === "string" ? e.data.name : "input";
    const name = rank === 2 || plainName(raw) ? raw : "input";
    const pinned = e.refs[0] ?? null;
    const source: { [key: string]: Json } = { sha256: sha };
    if (rank === 2) {
      source.uri = pinned === null ? null : original.get(pinned) ?? pinned;
      source.pinned = pinned;
    }
    const sourceText = canonicalize(source)!;
    datasets.push({
      name,
      digest: sha256Hex(`${name}\n${sourceText}`).slice(0, 32),
      sourceType: "provevi",
      source: sourceText,
    });
  }
  return datasets;
}

/** What the spans of a copy are made with. */
interface SpanMaking {
  rank: number;
  runId: string;
  payload: (digest: unknown) => Promise<Json | undefined>;
}

/** The run's root span, from `run_created` to the last event, with its input and output at `bodies`. */
async function rootSpan(
  events: readonly EvidenceEvent[],
  making: SpanMaking & { failed: boolean },
): Promise<CopySpan> {
  const { rank, runId, failed } = making;
  const created = events[0]!;
  const root: CopySpan = {
    spanId: created.span_id!,
    parentSpanId: null,
    name: "",
    kind: 0,
    startNanos: nanos(created.started_at ?? created.time),
    endNanos: nanos(events[events.length - 1]!.time),
    status: failed ? { code: 2, message: "" } : { code: 1, message: "" },
    attributes: {},
    events: [],
  };
  const agent = typeof created.data.agent === "string" ? created.data.agent : null;
  const model = typeof created.data.model === "string" ? created.data.model : null;
  const rootName = agent === null ? "invoke_agent" : `invoke_agent ${agent}`;
  root.name = rank === 2 || plainSpanName(rootName) ? rootName : "invoke_agent";
  const rootAttributes: Record<string, Json> = {
    [RUN_ID_TAG]: runId,
    "mlflow.spanType": JSON.stringify("AGENT"),
    "gen_ai.operation.name": "invoke_agent",
  };
  if (agent !== null) rootAttributes["gen_ai.agent.name"] = agent;
  if (model !== null) rootAttributes["gen_ai.request.model"] = model;
  root.attributes = cutAttributes(rootAttributes, rank);
  if (rank === 2) {
    root.attributes["mlflow.spanInputs"] = JSON.stringify(await rootInput(events, making.payload));
    const end = events.find((e) => e.type === "run_completed" || e.type === "run_failed");
    if (end) root.attributes["mlflow.spanOutputs"] = JSON.stringify(end.data);
  }
  return root;
}

/** Adds one event of a step to its span: a failure, or the step's name, attributes and bodies. */
async function addStep(span: CopySpan, e: EvidenceEvent, making: SpanMaking): Promise<void> {
  const { rank, runId, payload } = making;
  const end = nanos(e.time);
  if (e.type === "step_failed") {
    span.status = { code: 2, message: "" };
    const error = typeof e.data.error === "string" ? e.data.error : null;
    if (error !== null && (rank === 2 || plainName(error))) span.attributes["error.type"] = error;
    if (rank === 2) {
      span.events.push({ name: "step_failed", timeNanos: end, attributes: bodyAttributes(e) });
    }
    return;
  }
  const step = stepOf(e);
  span.name = rank === 2 || plainSpanName(step.name, { declared: step.declared }) ? step.name : step.label;
  Object.assign(span.attributes, cutAttributes({ [RUN_ID_TAG]: runId, ...step.attributes }, rank));
  if (step.failed) span.status = { code: 2, message: "" };
  if (rank === 2) {
    Object.assign(span.attributes, bodyAttributes(e));
    const inputs = await payload(e.payload);
    if (inputs !== undefined) span.attributes["mlflow.spanInputs"] = JSON.stringify(inputs);
    const outputs = await payload(e.data.response_payload ?? e.data.result_payload);
    if (outputs !== undefined) span.attributes["mlflow.spanOutputs"] = JSON.stringify(outputs);
  }
}

/** A step as a span shows it. */
type Step = {
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
function stepOf(e: EvidenceEvent): Step {
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
function cutAttributes(attributes: Record<string, Json>, rank: number): Record<string, Json> {
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
function bodyAttributes(e: EvidenceEvent): Record<string, Json> {
  const out: Record<string, Json> = {
    "provrun.seq": e.seq,
    "provrun.event": e.type,
    "provrun.component": e.component,
    "provrun.data": canonicalize(e.data) ?? "{}",
  };
  if (e.refs.length) out["provrun.refs"] = [...e.refs];
  return out;
}

/** A library's span (`span_recorded`), when the policy lets its library feed the destination. */
async function librarySpan(
  e: EvidenceEvent,
  options: CopyContentOptions,
  rank: number,
  payload: (digest: unknown) => Promise<Json | undefined>,
): Promise<CopySpan | null> {
  const d = e.data;
  const library = typeof d.library === "string" ? d.library : null;
  if (library === null || !options.policy.feeds(library, options.destination.name)) return null;
  if (e.span_id === null) return null;
  const end = typeof d.end_time === "string" ? d.end_time : e.time;
  const status = typeof d.status === "object" && d.status !== null && !Array.isArray(d.status)
    ? d.status
    : {};
  const name = typeof d.name === "string" ? d.name : "span";
  const body = rank === 2 ? await payload(e.payload) : undefined;
  const bodyObject = typeof body === "object" && body !== null && !Array.isArray(body) ? body : {};
  const fullName = typeof bodyObject.name === "string" ? bodyObject.name : name;
  const span: CopySpan = {
    spanId: e.span_id,
    parentSpanId: e.parent_span_id,
    name: rank === 2 ? fullName : plainSpanName(name) ? name : library,
    kind: typeof d.kind === "number" ? d.kind : 0,
    startNanos: nanos(e.started_at ?? e.time),
    endNanos: nanos(end),
    status: {
      code: typeof status.code === "number" ? status.code : 0,
      message: rank === 2
        ? String(bodyObject.status_message ?? status.message ?? "")
        : typeof status.message === "string" && plainName(status.message)
        ? status.message
        : "",
    },
    attributes: {},
    events: [],
  };
  const attributes = typeof d.attributes === "object" && d.attributes !== null && !Array.isArray(d.attributes)
    ? d.attributes
    : {};
  span.attributes = cutAttributes(attributes, rank);
  span.attributes[RUN_ID_TAG] = e.run_id;
  if (rank === 2) {
    const more = bodyObject.attributes;
    if (typeof more === "object" && more !== null && !Array.isArray(more)) {
      Object.assign(span.attributes, more);
    }
    const spanEvents = Array.isArray(bodyObject.events) ? bodyObject.events : [];
    for (const ev of spanEvents) {
      if (typeof ev !== "object" || ev === null || Array.isArray(ev)) continue;
      const attrs =
        typeof ev.attributes === "object" && ev.attributes !== null && !Array.isArray(ev.attributes)
          ? ev.attributes
          : {};
      span.events.push({
        name: typeof ev.name === "string" ? ev.name : "event",
        timeNanos: typeof ev.time === "string" ? nanos(ev.time) : span.startNanos,
        attributes: attrs,
      });
    }
  }
  return span;
}

/** The run's settings as MLflow params: below `bodies` only those that are plain names. */
function settings(data: { [key: string]: Json }, rank: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    if (key === "__proto__" || value === null || value === undefined) continue;
    if (rank === 2) {
      const shown = key === "spec" ? withoutSecrets(value) : value;
      out[key] = cut(typeof shown === "string" ? shown : canonicalize(shown) ?? "null", MAX_PARAM);
      continue;
    }
    if (key === "experiment" || key === "experiment_pin") {
      if (plainExperiment(value)) out[key] = value as string;
      continue;
    }
    if (typeof value === "object") continue; // lists and mappings (the spec, the inputs) go at bodies
    if (plainAttribute(key, value, { modelKeys: RUN_MODEL_KEYS })) out[key] = String(value);
  }
  return out;
}

/** The counts of tokens and calls over the run's model and tool calls, and the cost the run recorded. */
function usageMetrics(events: readonly EvidenceEvent[]): Record<string, number> {
  const sums: Record<string, number> = {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    model_calls: 0,
    tool_calls: 0,
  };
  for (const e of events) {
    if (e.type === "model_called") {
      sums.model_calls! += 1;
      for (
        const key of [
          "input_tokens",
          "output_tokens",
          "cache_read_tokens",
          "cache_write_tokens",
          "reasoning_tokens",
        ]
      ) {
        const n = e.data[key];
        if (typeof n === "number" && Number.isFinite(n)) sums[key]! += n;
      }
    } else if (e.type === "tool_called") sums.tool_calls! += 1;
  }
  sums.total_tokens = sums.input_tokens! + sums.output_tokens!;
  // the total the run recorded (its last event's cost), in its price table's currency
  const cost = events.at(-1)?.data.cost;
  if (typeof cost === "object" && cost !== null && !Array.isArray(cost) && typeof cost.amount === "string") {
    const amount = Number(cost.amount);
    if (Number.isFinite(amount)) sums.cost = amount;
  }
  return sums;
}

/** The store's assessments as the level lets them go. */
function copyAssessments(
  assessments: readonly Assessment[],
  events: readonly EvidenceEvent[],
  spans: ReadonlyMap<string, CopySpan>,
  rank: number,
): CopyAssessment[] {
  const out: CopyAssessment[] = [];
  for (const a of assessments) {
    if (rank < 2 && !plainName(a.name)) continue;
    const value = a.value as Json;
    const allowed = rank === 2 ||
      typeof value === "boolean" ||
      (typeof value === "string" && plainName(value)) ||
      (rank >= 1 && typeof value === "number" && Number.isFinite(value));
    if (!allowed) continue;
    let spanId: string | null = null;
    if (a.span_id !== null) spanId = a.span_id;
    else if (a.seq !== null) spanId = events.find((e) => e.seq === a.seq)?.span_id ?? null;
    if (spanId !== null && !spans.has(spanId)) spanId = null;
    const source = a.source !== null && (rank === 2 || plainName(a.source)) ? a.source : "provevi";
    const created = Date.parse(a.created_at);
    out.push({
      name: a.name,
      value,
      spanId,
      source,
      rationale: rank === 2 ? a.rationale : null,
      createdMillis: Number.isFinite(created) ? created : 0,
    });
  }
  return out;
}

/** Nanoseconds since the epoch of an RFC 3339 UTC time with up to nine fraction digits. */
export function nanos(time: string): bigint {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(time);
  if (!m) throw new TypeError(`"${time}" is not a UTC RFC 3339 time`);
  const seconds = BigInt(Date.parse(`${m[1]}Z`) / 1000);
  return seconds * 1_000_000_000n + BigInt((m[2] ?? "").padEnd(9, "0"));
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
