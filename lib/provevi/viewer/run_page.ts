/**
 * One page of a run, cut from what the viewer knows of it (`run_model.ts`): a summary of all its events, one
 * page of its events and of its spans, its parts and assessments, each bounded whatever the run's size. The
 * types here are the run page's data, which `run_view.ts` gives.
 * @module
 */
import type { Json } from "../evidence/event.ts";
import type { Assessment } from "../store/assess.ts";
import type { EvidenceStore } from "../store/store.ts";
import type { RunRecord } from "../evidence/record.ts";
import { FileStore } from "../store/file_store.ts";
import { assessmentsInFolder } from "../store/file_assessments.ts";
import type { StoreQuestions } from "../store/store_questions.ts";
import type { Level } from "../telemetry/attributes.ts";
import type { EventItem } from "../live/live.ts";
import {
  lineNumber,
  lineSha256,
  type RunModel,
  type RunModelOptions,
  trusted,
  type ViewVerdict,
} from "./run_model.ts";
import { callsOf, type RunCalls, type ViewCall, type ViewError } from "./run_calls.ts";
import { factsOf, failureOf, type RunFacts, type RunFailure } from "./run_facts.ts";
import { spansOf, type ViewSpan } from "./run_spans.ts";
import { assessmentsAt } from "./assessments_view.ts";
import { cutJson } from "./view_cut.ts";
import { type ViewEvent, viewEvent } from "./view_event.ts";

/** How much of a run one page holds. */
const RUN_PAGE = {
  /** Events on a page, unless asked for fewer or more. */
  events: 200,
  /** Events on a page at most. */
  maxEvents: 1000,
  /** The bytes of a page's events as JSON: a page stops before the event that would pass them. */
  eventBytes: 1024 * 1024,
  /** Spans on a page, unless asked for more. */
  spans: 300,
  /** Spans on a page at most. */
  maxSpans: 2000,
  /** Rows of inputs, outputs, grants and assessments. */
  rows: 500,
  /** The events of a span that a page lists. */
  spanSeqs: 20,
  /** The characters of a span's name. */
  spanName: 200,
  /** Model and tool calls listed. */
  calls: 500,
  /** Errors listed. */
  errors: 200,
} as const;

/** What the page says of all the run's events, whichever page it holds. */
export interface RunViewSummary {
  /** How many events the run has (so far, while it runs). */
  events: number;
  last_seq: number | null;
  first_time: string | null;
  last_time: string | null;
  /** How many events of each type. */
  by_type: { [type: string]: number };
  /** The token counts of the model calls, summed, when the level shows them. */
  tokens: { input: number; output: number } | null;
  /** The run's cost (the total it recorded, or its calls' costs summed), when the level shows it. */
  cost: RunCalls["cost"];
  /** The model calls and tool calls, whatever recorded them, and where the counts came from. */
  model_calls: number;
  tool_calls: number;
  calls_from: RunCalls["from"];
  /** How many errors: failed steps and tool calls, refusals, telemetry problems. */
  errors: number;
  /** How many spans, inputs, outputs, grants and refusals, and assessments (null: the store keeps none). */
  spans: number;
  inputs: number;
  outputs: number;
  access: number;
  assessments: number | null;
}

/** The run page's data. */
export interface RunView {
  run_id: string;
  folder: string | null;
  /** `completed`, `failed`, `cancelled`, `running`, or `cut` (sealed, or stopped, without an ending event). */
  status: string;
  running: boolean;
  level: Level | null;
  /** What the level hides and which policy line would show it. */
  note: string | null;
  verdict: ViewVerdict;
  /** True when content is shown though the run does not verify (asked for with `untrusted`). */
  untrusted: boolean;
  summary: RunViewSummary;
  /** One page of the events, in order. */
  events: ViewEvent[];
  /** The seq after which the next page of events starts, or null when this page reaches the last event. */
  events_next: number | null;
  /** One page of the spans, each parent before its children. */
  spans: ViewSpan[];
  /** The offset of the next page of spans, or null when this page reaches the last span. */
  spans_next: number | null;
  inputs: { seq: number; name: Json; uri: string | null; sha256: Json }[];
  outputs: { seq: number; path: Json; sha256: Json; size: Json }[];
  access: {
    seq: number;
    decision: "requested" | "granted" | "denied";
    uri: string | null;
    mode: Json;
    reason: Json;
  }[];
  assessments: Partial<Assessment>[] | null;
  /** The settings the run was created with (its `run_created` content at the level). */
  settings: { [key: string]: Json };
  /** The run's names, as the level shows them. */
  facts: RunFacts;
  /** Why the run failed, or null. */
  failure: RunFailure | null;
  /** The model and tool calls, in order (the first 500). */
  calls: ViewCall[];
  /** What went wrong, in order (the first 200). */
  errors: ViewError[];
  /**
   * The event that holds the run's whole conversation, at `bodies`: its last history (the agent's messages, an
   * agent program's session file), else its last model call; null when there is none or the level hides it.
   */
  conversation_seq: number | null;
}

/** Options of {@linkcode runView}. */
export interface RunViewOptions extends RunModelOptions {
  /** The page of events: those after this seq (-1, from the first, by default). */
  after?: number;
  /** How many events the page holds at most: 200 by default, 1,000 at most, and 1 MiB of JSON. */
  limit?: number;
  /** The page of spans: from this offset (0 by default). */
  spansOffset?: number;
  /** How many spans the page holds at most: 300 by default, 2,000 at most. */
  spansLimit?: number;
}

/**
 * One page of a run the viewer has read; it changes nothing of the model, which requests may share.
 *
 * @param store The store, for the run's assessments.
 * @param model The run as the viewer knows it.
 * @param options Which page.
 * @returns The page.
 */
export async function pageOf(
  store: EvidenceStore,
  model: RunModel,
  options: Omit<RunViewOptions, keyof RunModelOptions>,
): Promise<RunView> {
  const { events, record } = model;
  const shown = new Map<number, EventItem>();
  model.shown.forEach((item, i) => item !== null && shown.set(events[i]!.seq, item));
  const spans = spansOf(events, shown, { running: model.running, received: model.received ?? [] });
  const parts = partsOf(model);
  const calls = callsOf(events, model.shown, model.level);
  const assessments = await assessmentsOf(
    store,
    record,
    trusted(model.verdict) || model.untrusted ? model.level : null,
  );
  const page = await eventsPage(model, options);
  const spansOffset = Math.max(0, options.spansOffset ?? 0);
  const spansEnd = spansOffset + Math.min(options.spansLimit ?? RUN_PAGE.spans, RUN_PAGE.maxSpans);
  return {
    run_id: record.runId,
    folder: record.folder,
    status: model.ended ?? (model.sealed ? "cut" : "running"),
    running: model.running,
    level: model.level,
    note: model.note,
    verdict: model.verdict,
    untrusted: model.untrusted,
    summary: {
      ...summaryOf(model),
      tokens: calls.tokens,
      cost: calls.cost,
      model_calls: calls.calls.filter((c) => c.kind === "model").length,
      tool_calls: calls.calls.filter((c) => c.kind === "tool").length,
      calls_from: calls.from,
      errors: calls.errors.length,
      spans: spans.length,
      inputs: parts.inputs.length,
      outputs: parts.outputs.length,
      access: parts.access.length,
      assessments: assessments === null ? null : assessments.length,
    },
    ...page,
    spans: spans.slice(spansOffset, spansEnd).map((s) => ({
      ...s,
      name: s.name.length > RUN_PAGE.spanName ? s.name.slice(0, RUN_PAGE.spanName) + "…" : s.name,
      seqs: s.seqs.slice(0, RUN_PAGE.spanSeqs),
    })),
    spans_next: spansEnd < spans.length ? spansEnd : null,
    inputs: parts.inputs.slice(0, RUN_PAGE.rows),
    outputs: parts.outputs.slice(0, RUN_PAGE.rows),
    access: parts.access.slice(0, RUN_PAGE.rows),
    assessments: assessments === null
      ? null
      : assessments.slice(0, RUN_PAGE.rows).map((a) => cutJson(a as Json).value as Partial<Assessment>),
    settings: cutJson(model.shown[0]?.data ?? {}).value as RunView["settings"],
    facts: factsOf(events[0], model.level),
    failure: failureOf(events, model.shown, model.level),
    calls: calls.calls.slice(0, RUN_PAGE.calls),
    errors: calls.errors.slice(0, RUN_PAGE.errors),
    conversation_seq: conversationOf(model),
  };
}

/** The event of the run's whole conversation (see {@linkcode RunView.conversation_seq}). */
function conversationOf(model: RunModel): number | null {
  if (model.level !== "bodies" || model.shown[0] === null || model.shown[0] === undefined) return null;
  const { events } = model;
  const history = events.findLast((e) =>
    e.type === "trace_imported" && e.payload !== null && e.data.kind !== "raw_api_body"
  );
  return (history ?? events.findLast((e) => e.type === "model_called"))?.seq ?? null;
}

/** The events after `after`, up to the page's count and bytes; always at least one when there is one. */
async function eventsPage(
  model: RunModel,
  options: Pick<RunViewOptions, "after" | "limit">,
): Promise<Pick<RunView, "events" | "events_next">> {
  const { events } = model;
  const after = options.after ?? -1;
  const limit = Math.max(1, Math.min(options.limit ?? RUN_PAGE.events, RUN_PAGE.maxEvents));
  const start = events.findIndex((e) => e.seq > after);
  if (start < 0) return { events: [], events_next: null };
  const page: ViewEvent[] = [];
  let bytes = 0;
  let i = start;
  // A few events at once: each reads the heads of its payloads, and one by one the reads wait on each other.
  while (i < events.length && page.length < limit) {
    const batch = await Promise.all(
      Array.from(
        { length: Math.min(16, limit - page.length, events.length - i) },
        (_, k) =>
          viewEvent(events[i + k]!, {
            record: model.record,
            level: model.level,
            shown: model.shown[i + k] ?? null,
            lineSha256: lineSha256(model, i + k),
            line: lineNumber(model, i + k),
            answer: true,
          }),
      ),
    );
    for (const view of batch) {
      const size = JSON.stringify(view).length;
      if (page.length > 0 && bytes + size > RUN_PAGE.eventBytes) {
        return { events: page, events_next: page.at(-1)!.seq };
      }
      page.push(view);
      bytes += size;
      i++;
    }
  }
  return { events: page, events_next: i < events.length ? page.at(-1)!.seq : null };
}

function summaryOf(
  model: RunModel,
): Pick<RunViewSummary, "events" | "last_seq" | "first_time" | "last_time" | "by_type"> {
  const byType: { [type: string]: number } = {};
  for (const e of model.events) byType[e.type] = (byType[e.type] ?? 0) + 1;
  return {
    events: model.events.length,
    last_seq: model.events.at(-1)?.seq ?? null,
    first_time: model.events[0]?.time ?? null,
    last_time: model.events.at(-1)?.time ?? null,
    by_type: byType,
  };
}

/** A string of a part's row, cut to the page. */
function cell(value: Json | undefined): Json {
  return cutJson(value ?? null).value;
}

function partsOf(model: RunModel): Pick<RunView, "inputs" | "outputs" | "access"> {
  const inputs: RunView["inputs"] = [];
  const outputs: RunView["outputs"] = [];
  const access: RunView["access"] = [];
  model.events.forEach((e, i) => {
    const item = model.shown[i];
    const data = item?.data ?? {};
    const ref = item?.refs?.[0];
    const uri = ref === undefined ? null : cell(ref) as string;
    if (e.type === "input_staged") {
      inputs.push({ seq: e.seq, name: cell(data.name), uri, sha256: cell(data.sha256) });
    } else if (e.type === "output_artifact_created") {
      outputs.push({
        seq: e.seq,
        path: cell(data.path),
        sha256: cell(data.sha256),
        size: cell(data.size),
      });
    } else if (e.type === "access_requested" || e.type === "access_granted" || e.type === "access_denied") {
      access.push({
        seq: e.seq,
        decision: e.type === "access_requested"
          ? "requested"
          : e.type === "access_granted"
          ? "granted"
          : "denied",
        uri,
        mode: cell(data.mode),
        reason: cell(data.reason),
      });
    }
  });
  return { inputs, outputs, access };
}

/**
 * The run's assessments cut to the level; null when the store keeps none. The file store's are read from the
 * run's own folder, which the page has read already.
 */
async function assessmentsOf(
  store: EvidenceStore,
  record: RunRecord,
  level: Level | null,
): Promise<Partial<Assessment>[] | null> {
  let all: Assessment[];
  try {
    all = store instanceof FileStore
      ? await assessmentsInFolder(record)
      : await (store as EvidenceStore & Partial<StoreQuestions>).assessments!(record.runId);
  } catch {
    return null;
  }
  return assessmentsAt(all, level);
}
