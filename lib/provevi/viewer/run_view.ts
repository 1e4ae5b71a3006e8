/**
 * The run page's data: the verdict of `verifyRun` with each problem, the run's events (each event's structure
 * always; its content at the viewer's level), the trace as a timeline of nested spans, the inputs with their
 * pins and hashes, the outputs, the grants and refusals, the assessments and each model call's answer. An ended
 * run that verifies is shown from its replay; a run that does not verify shows only its structure and its
 * problems, unless the viewer asks for the unverified content, which is then marked as such.
 * @module
 */
import { type Problem, problem } from "../evidence/problem.ts";
import { sha256Hex } from "../evidence/hash.ts";
import { eventLine, type EvidenceEvent, type Json } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";
import { readEventsText } from "../evidence/verify.ts";
import { answerOf, feedStatus, replyOf } from "../live/feed.ts";
import { type EventItem, payloadOf, shownAt } from "../live/live.ts";
import { replayEvents } from "../live/replay.ts";
import { verifyRun, type VerifyRunOptions } from "../runs/verify_run.ts";
import type { Assessment } from "../store/assess.ts";
import type { EvidenceStore } from "../store/store.ts";
import type { StoreQuestions } from "../store/store_questions.ts";
import type { Level } from "../telemetry/attributes.ts";
import { plainName } from "../telemetry/plain_name.ts";
import type { TelemetryPolicy } from "../telemetry/policy.ts";
import { viewerLevel } from "./viewer_level.ts";

/** One event as the viewer shows it. */
export interface ViewEvent {
  seq: number;
  time: string;
  started_at: string | null;
  type: string;
  confidence: string;
  trace_id: string | null;
  span_id: string | null;
  parent_span_id: string | null;
  /** The SHA-256 of the event's payload, or null. */
  payload_sha256: string | null;
  /** The SHA-256 of the event's line, which the next event's `prev` names. */
  line_sha256: string;
  /** The event's content at the viewer's level, or null when only its structure shows. */
  shown: EventItem | null;
  /** The answer of the model call this event records, at `bodies`. */
  answer?: string;
}

/** One span of the run's trace, as a bar of the timeline. */
export interface ViewSpan {
  span_id: string;
  parent_span_id: string | null;
  name: string;
  /** Microseconds from the start of the run. */
  start_us: number;
  /** Microseconds from the start of the run. */
  end_us: number;
  depth: number;
  status: "ok" | "error" | "running";
  /** The events of the span. */
  seqs: number[];
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
  /** The verdict; each problem with its code (the page prints the message). */
  verdict: { checked: boolean; ok: boolean; problems: Problem[]; bundle: string | null };
  /** True when content is shown though the run does not verify (asked for with `untrusted`). */
  untrusted: boolean;
  events: ViewEvent[];
  spans: ViewSpan[];
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
}

/** Options of {@linkcode runView}. */
export interface RunViewOptions {
  /** The viewer's telemetry policy. */
  policy: TelemetryPolicy;
  /** The catalog that reads a committed bundle and the experiment, as for `prove verify`. */
  catalog?: VerifyRunOptions["catalog"];
  /** Show the content of a run that does not verify, marked as unverified. */
  untrusted?: boolean;
}

/**
 * The run page's data for one run.
 *
 * @param store The store.
 * @param record The run, as `findRun` or the store gives it.
 * @param options The policy, the catalog, and whether to show unverified content.
 * @returns The view.
 * @example
 * ```ts
 * import { runView } from "./run_view.ts";
 * // const view = await runView(store, await store.readRun(id), { policy });
 * ```
 */
export async function runView(
  store: EvidenceStore,
  record: RunRecord,
  options: RunViewOptions,
): Promise<RunView> {
  // An ended run is read once, by its check (the events reach the page through the check's hook); a running
  // run has no check yet, so its events so far are read here.
  const sealed = (await record.manifestText().catch(() => null)) !== null;
  let text: string | null = null;
  let read = { events: [] as EvidenceEvent[], lines: [] as string[], problems: [] as Problem[] };
  let verdict: RunView["verdict"] | null = null;
  if (sealed) {
    let checked: readonly EvidenceEvent[] | null = null;
    const check = await verifyRun(record, {
      store,
      ...(options.catalog ? { catalog: options.catalog } : {}),
      extraChecks: [(_record, events) => {
        checked = events;
        return Promise.resolve([]);
      }],
    });
    verdict = { checked: true, ok: check.ok, problems: check.problems, bundle: check.bundle };
    if (check.ok && checked !== null) {
      const events = checked as readonly EvidenceEvent[];
      // The chain verifies, so each line is its event's canonical form, and the next event's prev is its hash.
      read = { events: [...events], lines: [], problems: [] };
    }
  }
  if (verdict === null || !verdict.ok) {
    text = await record.eventsText().catch(() => null);
    read = readEventsText(text ?? "");
  }
  const events = read.events;
  const last = events.at(-1);
  const ended = feedStatus(last);
  const running = ended === null && !sealed;
  const { level, note } = await viewerLevel(options.policy, record, events[0]);
  if (verdict === null) {
    verdict = sealed || ended !== null
      ? {
        checked: true,
        ok: false,
        problems: [
          problem("manifest.missing", "evidence/manifest.json is missing: the run was not sealed", {
            file: "manifest.json",
          }),
        ],
        bundle: null,
      }
      : { checked: false, ok: read.problems.length === 0, problems: read.problems, bundle: null };
  }
  if (!verdict.ok && text === null && verdict.checked) {
    verdict.problems.unshift(
      problem("events.unreadable", "evidence/events.jsonl cannot be read", { file: "events.jsonl" }),
    );
  }
  const trusted = verdict.ok;
  const untrusted = !trusted && options.untrusted === true;
  const shown = new Map<number, EventItem>();
  const answers = new Map<number, string>();
  if (level !== null && (trusted || untrusted)) {
    if (ended !== null && trusted && read.problems.length === 0) {
      let pending: string | null = null;
      let lastSeq = -1;
      for (const item of await replayEvents(record, events, level)) {
        if (item.type === "event") {
          shown.set(item.seq, item);
          if (pending !== null) answers.set(item.seq, pending);
          pending = null;
          lastSeq = item.seq;
        } else if (item.type === "text") {
          // Before its model_called, or after the step_failed of a stream cut part way.
          if (events[lastSeq]?.type === "step_failed" && !answers.has(lastSeq)) {
            answers.set(lastSeq, item.text);
          } else pending = item.text;
        }
      }
    } else {
      for (const event of events) {
        const item = await shownAt(event, level, { record }).catch(() => null);
        if (item) shown.set(event.seq, item);
        const reply = level === "bodies" ? replyOf(event) : null;
        if (reply) {
          const answer = await payloadOf(record, reply).then(answerOf, () => null);
          if (answer !== null) answers.set(event.seq, answer);
        }
      }
    }
  }
  const view: ViewEvent[] = events.map((e, i) => ({
    seq: e.seq,
    time: e.time,
    started_at: e.started_at,
    type: e.type,
    confidence: e.confidence,
    trace_id: e.trace_id,
    span_id: e.span_id,
    parent_span_id: e.parent_span_id,
    payload_sha256: e.payload,
    line_sha256: read.lines[i] !== undefined
      ? sha256Hex(read.lines[i]!)
      : events[i + 1]?.prev ?? sha256Hex(eventLine(e)),
    shown: shown.get(e.seq) ?? null,
    ...(answers.has(e.seq) ? { answer: answers.get(e.seq)! } : {}),
  }));
  const status = ended ?? (sealed ? "cut" : "running");
  return {
    run_id: record.runId,
    folder: record.folder,
    status,
    running,
    level,
    note,
    verdict,
    untrusted,
    events: view,
    spans: spansOf(events, shown, running),
    ...parts(events, shown),
    assessments: await assessmentsOf(store, record.runId, trusted || untrusted ? level : null),
    settings: shown.get(0)?.data ?? {},
  };
}

/** The parsed seconds of recent event times: a run's events fall in few seconds. */
const seconds = new Map<string, number>();

/** Microseconds since the epoch of an event time. */
export function micros(time: string): number {
  const second = time.slice(0, 19);
  let base = seconds.get(second);
  if (base === undefined) {
    if (seconds.size >= 4096) seconds.clear();
    seconds.set(second, base = Date.parse(second + "Z"));
  }
  // After the seconds: nothing, or a dot and digits; then the Z.
  const frac = time.charCodeAt(19) === 46 ? time.slice(20, Math.min(26, time.length - 1)) : "";
  return base * 1000 + Number(frac.padEnd(6, "0"));
}

/** The spans of the run's trace: its root, and one per step, nested by their parents. */
export function spansOf(
  events: readonly EvidenceEvent[],
  shown: ReadonlyMap<number, EventItem>,
  running: boolean,
): ViewSpan[] {
  if (events.length === 0) return [];
  const t0 = micros(events[0]!.time);
  const end = running
    ? Math.max(micros(events.at(-1)!.time), Date.now() * 1000)
    : micros(events.at(-1)!.time);
  const rootId = events[0]!.span_id ?? "root";
  const spans = new Map<string, ViewSpan>();
  const failed = feedStatus(events.at(-1)) !== "completed" && !running;
  spans.set(rootId, {
    span_id: rootId,
    parent_span_id: null,
    name: `run ${typeof shown.get(0)?.data.agent === "string" ? shown.get(0)!.data.agent : ""}`.trim(),
    start_us: 0,
    end_us: end - t0,
    depth: 0,
    status: running ? "running" : failed ? "error" : "ok",
    seqs: [],
  });
  for (const e of events) {
    const id = e.span_id ?? rootId;
    let span = spans.get(id);
    if (!span) {
      const data = shown.get(e.seq)?.data ?? {};
      const label = [data.model, data.tool, data.name].find((v) => typeof v === "string");
      span = {
        span_id: id,
        parent_span_id: e.parent_span_id ?? rootId,
        name: label ? `${stepName(e)} ${label}` : stepName(e),
        start_us: micros(e.started_at ?? e.time) - t0,
        end_us: micros(e.time) - t0,
        depth: 0,
        status: e.type === "step_failed" ? "error" : "ok",
        seqs: [],
      };
      spans.set(id, span);
    } else if (id !== rootId) {
      span.end_us = Math.max(span.end_us, micros(e.time) - t0);
      if (e.type === "step_failed") span.status = "error";
    }
    span.seqs.push(e.seq);
  }
  const list = [...spans.values()];
  for (const span of list) {
    let depth = 0;
    let parent = span.parent_span_id;
    const seen = new Set<string>();
    while (parent !== null && spans.has(parent) && !seen.has(parent) && depth < 50) {
      seen.add(parent);
      depth++;
      parent = spans.get(parent)!.parent_span_id;
    }
    span.depth = depth;
  }
  // Depth first, each parent before its children, siblings by start.
  // (Linear in the spans: a run of thousands of steps is one parent with thousands of children.)
  const children = new Map<string | null, ViewSpan[]>();
  for (const span of list) {
    const key = span.span_id === rootId
      ? null
      : (spans.has(span.parent_span_id ?? "") ? span.parent_span_id : rootId);
    const siblings = children.get(key);
    if (siblings) siblings.push(span);
    else children.set(key, [span]);
  }
  const ordered: ViewSpan[] = [];
  const placed = new Set<ViewSpan>();
  const walk = (key: string | null) => {
    for (const s of (children.get(key) ?? []).sort((a, b) => a.start_us - b.start_us)) {
      if (placed.has(s)) continue;
      placed.add(s);
      ordered.push(s);
      walk(s.span_id);
    }
  };
  walk(null);
  return ordered;
}

/** The GenAI name of a step's span from its event. */
function stepName(e: EvidenceEvent): string {
  const step = e.type === "step_failed" && typeof e.data.step === "string" ? e.data.step : e.type;
  if (step === "model_called") return "chat";
  if (step === "tool_called") return "execute_tool";
  return step;
}

function parts(
  events: readonly EvidenceEvent[],
  shown: ReadonlyMap<number, EventItem>,
): Pick<RunView, "inputs" | "outputs" | "access"> {
  const inputs: RunView["inputs"] = [];
  const outputs: RunView["outputs"] = [];
  const access: RunView["access"] = [];
  for (const e of events) {
    const item = shown.get(e.seq);
    const data = item?.data ?? {};
    const uri = item?.refs?.[0] ?? null;
    if (e.type === "input_staged") {
      inputs.push({ seq: e.seq, name: data.name ?? null, uri, sha256: data.sha256 ?? null });
    } else if (e.type === "output_artifact_created") {
      outputs.push({
        seq: e.seq,
        path: data.path ?? null,
        sha256: data.sha256 ?? null,
        size: data.size ?? null,
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
        mode: data.mode ?? null,
        reason: data.reason ?? null,
      });
    }
  }
  return { inputs, outputs, access };
}

/**
 * The run's assessments cut to the level, as for the copy in MLflow: below `bodies` a name that is not plain
 * stays out, a source that is not plain shows as provevi, a value shows at `names` when it is a name or a yes
 * or no and at `usage` when it is a number too, and a rationale shows only at `bodies`. Null when the store
 * keeps no assessments (the file store).
 */
async function assessmentsOf(
  store: EvidenceStore,
  runId: string,
  level: Level | null,
): Promise<Partial<Assessment>[] | null> {
  let all: Assessment[];
  try {
    all = await (store as EvidenceStore & Partial<StoreQuestions>).assessments!(runId);
  } catch {
    return null;
  }
  if (level === "bodies") return all;
  return all.flatMap((a) => {
    const base = { id: a.id, seq: a.seq, span_id: a.span_id, created_at: a.created_at };
    if (level === null) return [base];
    if (!plainName(a.name)) return [];
    const value = typeof a.value === "boolean" || (typeof a.value === "string" && plainName(a.value)) ||
        (level === "usage" && typeof a.value === "number")
      ? a.value
      : undefined;
    return [{
      ...base,
      name: a.name,
      source: a.source !== null && plainName(a.source) ? a.source : "provevi",
      ...(value !== undefined ? { value } : {}),
    }];
  });
}
