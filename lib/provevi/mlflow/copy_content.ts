/**
 * What the copy of a run in MLflow holds at a level (provevi-reference.txt, "What the copy holds"): the
 * experiment's name, the run's tags, settings and metrics, its inputs as datasets, the spans of its trace
 * (copy_trace.ts) and the assessments on it. Built from the evidence alone, so the copy can be rebuilt at any
 * time; it touches no server.
 * @module
 */
import canonicalize from "canonicalize";
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import { ProveviError } from "../evidence/errors.ts";
import { sha256Hex } from "../evidence/hash.ts";
import type { RunRecord } from "../evidence/record.ts";
import type { Assessment } from "../store/assess.ts";
import { withoutSecrets } from "../experiments/agent_class.ts";
import { type Level, levelRank } from "../telemetry/attributes.ts";
import { experimentAssessmentTags } from "./experiment_tags.ts";
import { plainAttribute, plainExperiment, plainName, RUN_MODEL_KEYS } from "../telemetry/plain_name.ts";
import type { Destination } from "../telemetry/policy_types.ts";
import type { TelemetryPolicy } from "../telemetry/policy.ts";
import { experimentName } from "./experiment_name.ts";
import { type CopySpan, copyTrace } from "./copy_trace.ts";
import { RUN_ID_TAG } from "./copy_tags.ts";

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
  const { root, spans, order } = await copyTrace(events, {
    rank,
    runId,
    failed,
    payload,
    feeds: (library) => options.policy.feeds(library, options.destination.name),
  });

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

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
