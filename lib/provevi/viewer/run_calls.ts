/**
 * A run's model calls, tool calls and errors as the viewer shows them, whatever ran the agent: the
 * `model_called` and `tool_called` events that provrun and the model gateway write; else the GenAI spans an
 * agent program sent (`span_recorded`, `gen_ai.operation.name` of `chat` or `execute_tool`); else, for tools,
 * the program's `PreToolUse` hooks. Each has its status (a failed step, a tool's error, a call refused), and the
 * tokens and cost it recorded where the level shows them. The errors are every failed step, failed tool call,
 * refusal and telemetry problem, for the page to show in red.
 * @module
 */
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import type { EventItem } from "../live/live.ts";
import type { Level } from "../telemetry/attributes.ts";
import { plainName } from "../telemetry/plain_name.ts";
import { micros } from "./run_spans.ts";

/** One model call or tool call. */
export interface ViewCall {
  seq: number;
  kind: "model" | "tool";
  /** What recorded it: an event of provrun or the gateway, a span the program sent, or a program's hook. */
  from: "event" | "span" | "hook";
  /** The model or the tool, when the level shows names. */
  name: string | null;
  span_id: string | null;
  status: "ok" | "error" | "refused";
  /** The error's class, when the level shows names and it is a plain name. */
  error: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  /** The cost the call recorded (a decimal text), when the level shows it. */
  cost: string | null;
  duration_us: number | null;
}

/** One thing that went wrong, for the page to show in red. */
export interface ViewError {
  seq: number;
  kind: "run_failed" | "step_failed" | "tool_error" | "refused" | "telemetry" | "span_error";
  /** The step, tool or type it concerns, when the level shows names. */
  what: string | null;
  /** The error's class or the decision's reason, at the level (a reason is free text: `bodies` only). */
  detail: string | null;
}

/** The run's calls and errors, and their sums. */
export interface RunCalls {
  calls: ViewCall[];
  errors: ViewError[];
  /** Where the counts came from: events, spans, hooks, or null when the run has none. */
  from: { model: ViewCall["from"] | null; tool: ViewCall["from"] | null };
  tokens: { input: number; output: number } | null;
  /** The run's cost: the total its last event records, else the sum of its calls' costs. */
  cost: { amount: string; currency: string | null } | null;
}

type Data = { [key: string]: Json };

const MODEL_OPS = new Set(["chat", "text_completion", "generate_content"]);

/** A value of the raw event that is a fixed word or a plain name, shown from `names`. */
function plain(level: Level | null, value: Json | undefined): string | null {
  return level !== null && typeof value === "string" && plainName(value) ? value : null;
}

function num(value: Json | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** A cost as a decimal text: the gateway writes text, which sums without rounding. */
function costText(value: Json | undefined): string | null {
  if (typeof value === "string" && /^\d{1,15}(\.\d{1,18})?$/.test(value)) return value;
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return String(value);
  return null;
}

function attributesOf(data: Data | undefined): Data {
  const a = data?.attributes;
  return typeof a === "object" && a !== null && !Array.isArray(a) ? a : {};
}

function durationOf(e: EvidenceEvent, end?: Json): number | null {
  const stop = typeof end === "string" ? end : e.time;
  if (e.started_at === null) return null;
  const us = micros(stop) - micros(e.started_at);
  return Number.isFinite(us) && us >= 0 ? us : null;
}

/** The first name given: the model that answered before the one asked for (a route such as `test:`). */
function nameOf(names: (Json | undefined)[]): string | null {
  return (names.find((n) => typeof n === "string" && n !== "") as string | undefined) ?? null;
}

/** The call an event records, or null. */
function callOf(e: EvidenceEvent, shown: EventItem | null, level: Level | null): ViewCall | null {
  const data: Data = shown?.data ?? {};
  const base = { seq: e.seq, span_id: e.span_id, cost: null, input_tokens: null, output_tokens: null };
  if (e.type === "model_called" || e.type === "tool_called") {
    const model = e.type === "model_called";
    const failed = !model && e.data.error !== null && e.data.error !== undefined;
    // A program's call that provrun refused at its hook is recorded as a tool_called with ToolRefused.
    const refused = failed && e.data.error === "ToolRefused";
    return {
      ...base,
      kind: model ? "model" : "tool",
      from: "event",
      name: nameOf(model ? [data.answered_by, data.model] : [data.tool]),
      status: refused ? "refused" : failed ? "error" : "ok",
      error: failed ? plain(level, e.data.error) : null,
      input_tokens: model ? num(data.input_tokens) : null,
      output_tokens: model ? num(data.output_tokens) : null,
      cost: model ? costText(data.cost) : null,
      duration_us: durationOf(e),
    };
  }
  if (e.type === "step_failed" && (e.data.step === "model_called" || e.data.step === "tool_called")) {
    return {
      ...base,
      kind: e.data.step === "model_called" ? "model" : "tool",
      from: "event",
      name: nameOf([data.answered_by, data.model, data.tool]),
      status: "error",
      error: plain(level, e.data.error),
      duration_us: durationOf(e),
    };
  }
  if (e.type === "span_recorded") {
    const op = attributesOf(e.data)["gen_ai.operation.name"];
    if (typeof op !== "string" || !(MODEL_OPS.has(op) || op === "execute_tool")) return null;
    const shownAttributes = attributesOf(data);
    const model = op !== "execute_tool";
    const status = e.data.status as Data | undefined;
    const name = model ? shownAttributes["gen_ai.request.model"] : shownAttributes["gen_ai.tool.name"];
    return {
      ...base,
      kind: model ? "model" : "tool",
      from: "span",
      name: typeof name === "string" ? name : null,
      status: status?.code === 2 ? "error" : "ok",
      error: null,
      input_tokens: model ? num(shownAttributes["gen_ai.usage.input_tokens"]) : null,
      output_tokens: model ? num(shownAttributes["gen_ai.usage.output_tokens"]) : null,
      duration_us: durationOf(e, e.data.end_time),
    };
  }
  return null;
}

/** The tool call a program's `PreToolUse` hook asked for, refused when provrun denied it. */
function hookCall(e: EvidenceEvent, level: Level | null): ViewCall | null {
  if (e.type !== "hook_called" || e.data.event !== "PreToolUse") return null;
  return {
    seq: e.seq,
    kind: "tool",
    from: "hook",
    name: plain(level, e.data.tool),
    span_id: e.span_id,
    status: e.data.decision === "deny" ? "refused" : "ok",
    error: null,
    input_tokens: null,
    output_tokens: null,
    cost: null,
    duration_us: null,
  };
}

/** The error an event records, or null. */
function errorOf(e: EvidenceEvent, shown: EventItem | null, level: Level | null): ViewError | null {
  const data: Data = shown?.data ?? {};
  const bodies = level === "bodies";
  const text = (v: Json | undefined) => (bodies && typeof v === "string" ? v.slice(0, 500) : null);
  switch (e.type) {
    case "run_failed":
      return {
        seq: e.seq,
        kind: "run_failed",
        what: level === null ? null : "run",
        detail: plain(level, e.data.error),
      };
    case "step_failed":
      return {
        seq: e.seq,
        kind: "step_failed",
        what: plain(level, e.data.step),
        detail: plain(level, e.data.error),
      };
    case "tool_called":
      if (e.data.error === null || e.data.error === undefined) return null;
      return {
        seq: e.seq,
        kind: "tool_error",
        what: plain(level, e.data.tool),
        detail: plain(level, e.data.error),
      };
    case "access_denied":
      return { seq: e.seq, kind: "refused", what: null, detail: text(data.reason) };
    case "hook_called":
      if (e.data.decision !== "deny") return null;
      return { seq: e.seq, kind: "refused", what: plain(level, e.data.tool), detail: text(data.reason) };
    case "telemetry_problem":
    case "telemetry_blocked":
      return { seq: e.seq, kind: "telemetry", what: e.type, detail: null };
    case "span_recorded": {
      const status = e.data.status as Data | undefined;
      if (status?.code !== 2) return null;
      return {
        seq: e.seq,
        kind: "span_error",
        what: typeof data.name === "string" ? data.name : null,
        detail: null,
      };
    }
  }
  return null;
}

/** Adds two decimal texts exactly. */
export function addDecimal(a: string, b: string): string {
  const scale = 18;
  const big = (s: string) => {
    const [whole, frac = ""] = s.split(".");
    return BigInt(whole! + frac.padEnd(scale, "0").slice(0, scale));
  };
  const sum = (big(a) + big(b)).toString().padStart(scale + 1, "0");
  const whole = sum.slice(0, -scale);
  const frac = sum.slice(-scale).replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole;
}

/**
 * The calls and errors of a run's events.
 *
 * @param events The run's events.
 * @param shown Each event's content at the level, by index (null where only its structure shows).
 * @param level The viewer's level for the run.
 * @returns Every call and error, where the counts came from, and the tokens and cost at the level.
 * @example
 * ```ts
 * import { callsOf } from "./run_calls.ts";
 * callsOf([], [], "bodies").calls.length; // 0
 * ```
 */
export function callsOf(
  events: readonly EvidenceEvent[],
  shown: readonly (EventItem | null)[],
  level: Level | null,
): RunCalls {
  const byEvent: ViewCall[] = [];
  const bySpan: ViewCall[] = [];
  const byHook: ViewCall[] = [];
  const errors: ViewError[] = [];
  const refusedIds = new Set<string>();
  events.forEach((e, i) => {
    const item = shown[i] ?? null;
    const call = callOf(e, item, level) ?? hookCall(e, level);
    if (call?.from === "event") byEvent.push(call);
    else if (call?.from === "span") bySpan.push(call);
    else if (call?.from === "hook") byHook.push(call);
    if (e.type === "hook_called" && e.data.decision === "deny" && typeof e.data.tool_use_id === "string") {
      refusedIds.add(e.data.tool_use_id);
    }
    const error = errorOf(e, item, level);
    if (error) errors.push(error);
  });
  // A tool span of a call that provrun refused is the program's record of the refusal.
  events.forEach((e) => {
    const id = attributesOf(e.data)["gen_ai.tool.call.id"];
    if (e.type !== "span_recorded" || typeof id !== "string" || !refusedIds.has(id)) return;
    const call = bySpan.find((c) => c.seq === e.seq);
    if (call) call.status = "refused";
  });
  const pick = (kind: ViewCall["kind"]) => {
    for (const list of [byEvent, bySpan, ...(kind === "tool" ? [byHook] : [])]) {
      const of = list.filter((c) => c.kind === kind);
      if (of.length) return of;
    }
    return [];
  };
  const models = pick("model");
  const tools = pick("tool");
  const calls = [...models, ...tools].sort((a, b) => a.seq - b.seq);
  return {
    calls,
    errors,
    from: { model: models[0]?.from ?? null, tool: tools[0]?.from ?? null },
    tokens: tokensOf(models),
    cost: costOf(events, shown, models),
  };
}

function tokensOf(models: readonly ViewCall[]): RunCalls["tokens"] {
  const counted = models.filter((c) => c.input_tokens !== null || c.output_tokens !== null);
  if (!counted.length) return null;
  return {
    input: counted.reduce((n, c) => n + (c.input_tokens ?? 0), 0),
    output: counted.reduce((n, c) => n + (c.output_tokens ?? 0), 0),
  };
}

/** The total the run's last event records (`data.cost`), else the sum of its calls' costs. */
function costOf(
  events: readonly EvidenceEvent[],
  shown: readonly (EventItem | null)[],
  models: readonly ViewCall[],
): RunCalls["cost"] {
  const last = shown.at(-1)?.data?.cost;
  if (events.length && typeof last === "object" && last !== null && !Array.isArray(last)) {
    const amount = costText(last.amount);
    if (amount !== null) {
      return { amount, currency: typeof last.currency === "string" ? last.currency : null };
    }
  }
  const priced = models.filter((c) => c.cost !== null);
  if (!priced.length) return null;
  return { amount: priced.reduce((sum, c) => addDecimal(sum, c.cost!), "0"), currency: null };
}
