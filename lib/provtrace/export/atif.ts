/**
 * The `atif` export: one line per run, an Agent Trajectory Interchange Format trajectory (Harbor RFC 0001,
 * v1.7; the schema is vendored in `fixtures/atif/`). The steps are the run's final conversation: a `system`
 * or `user` step per message, an `agent` step per reply (its text, thinking, tool calls, the tools' results
 * as its observation, the model that answered, and its metrics: token counts and, where the provider returned
 * them, the exact token IDs and log-probabilities), with the reply's time. A run whose `parent_run` is in the
 * same export is embedded in its parent's `subagent_trajectories`, not a line of its own. ATIF's objects allow
 * no field of their own, so a line's provenance is its trajectory's `extra.provenance`.
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import type { Call, CallRun } from "./_calls.ts";
import { argumentsObject, type ChatMessage, chatMessages, fileText } from "./_messages.ts";
import type { TokenTurn } from "./tokens.ts";

/** The ATIF version the trajectories declare. */
export const ATIF_VERSION = "ATIF-v1.7";

type Obj = { [key: string]: Json };

/**
 * A run's trajectory.
 *
 * @param run The run.
 * @param calls Its calls that got a reply, in seq order, each with its token turn (or null).
 * @returns The trajectory without `extra`, or null when no call got a reply.
 */
export function atifTrajectory(run: CallRun, calls: { call: Call; turn: TokenTurn | null }[]): Obj | null {
  const last = calls.at(-1);
  if (!last) return null;
  const steps: Obj[] = [];
  let reply = 0;
  let agentStep: Obj | null = null;
  for (const m of chatMessages(last.call.sent, last.call.received)) {
    if (m.result) {
      const step = agentStep ?? steps.at(-1);
      if (!step) continue;
      const ids = new Set(((step.tool_calls ?? []) as Obj[]).map((c) => c.tool_call_id));
      const observation = (step.observation ??= { results: [] }) as { results: Obj[] };
      observation.results.push({
        ...(m.result.id !== null && ids.has(m.result.id) ? { source_call_id: m.result.id } : {}),
        content: m.result.content,
      });
      continue;
    }
    if (m.role !== "assistant") {
      agentStep = null;
      steps.push({
        step_id: steps.length + 1,
        source: m.role === "user" ? "user" : "system",
        message: textOf(m),
      });
      continue;
    }
    agentStep = agentStepOf(m, steps.length + 1, calls[reply] ?? null);
    reply++;
    steps.push(agentStep);
  }
  if (steps.length === 0) return null;
  return {
    schema_version: ATIF_VERSION,
    session_id: run.session_id ?? run.run_id,
    trajectory_id: run.run_id,
    agent: {
      name: run.agent ?? "provrun",
      version: run.agent_version ?? "unversioned",
      ...(run.model ? { model_name: run.model } : {}),
      ...(last.call.tools?.length ? { tool_definitions: last.call.tools } : {}),
    },
    steps,
    final_metrics: finalMetrics(calls.map((c) => c.call), steps.length),
  };
}

/** An `agent` step: the reply, with its call's model, time and metrics. */
function agentStepOf(m: ChatMessage, id: number, at: { call: Call; turn: TokenTurn | null } | null): Obj {
  const step: Obj = { step_id: id, source: "agent" };
  const row = at?.call.row;
  if (row?.end_time) step.timestamp = String(row.end_time);
  if (row?.answered_by ?? row?.model) step.model_name = String(row.answered_by ?? row.model);
  step.message = textOf(m);
  if (m.thinking.length) step.reasoning_content = m.thinking.join("");
  if (m.calls.length) {
    step.tool_calls = m.calls.map((c, i) => ({
      tool_call_id: c.id ?? `call-${id}-${i + 1}`,
      function_name: c.name ?? "",
      arguments: argumentsObject(c.arguments),
    }));
  }
  if (at) {
    const metrics: Obj = {};
    const n = (v: string | number | null | undefined) => (v === null || v === undefined ? null : Number(v));
    if (n(row!.input_tokens) !== null) metrics.prompt_tokens = n(row!.input_tokens);
    if (n(row!.output_tokens) !== null) metrics.completion_tokens = n(row!.output_tokens);
    if (n(row!.cache_read_input_tokens) !== null) metrics.cached_tokens = n(row!.cache_read_input_tokens);
    if (at.turn) {
      metrics.prompt_token_ids = at.turn.prompt_token_ids;
      metrics.completion_token_ids = at.turn.completion_token_ids;
      if (at.turn.logprobs) metrics.logprobs = at.turn.logprobs;
    }
    if (Object.keys(metrics).length) step.metrics = metrics;
  }
  return step;
}

function textOf(m: ChatMessage): string {
  return [...m.texts, ...m.files.map(fileText)].join("");
}

function finalMetrics(calls: Call[], steps: number): Obj {
  const sum = (column: string) =>
    calls.reduce((total, c) => total + (c.row[column] === null ? 0 : Number(c.row[column])), 0);
  return {
    total_prompt_tokens: sum("input_tokens"),
    total_completion_tokens: sum("output_tokens"),
    total_cached_tokens: sum("cache_read_input_tokens"),
    total_steps: steps,
  };
}
