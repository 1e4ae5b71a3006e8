import assert from "node:assert/strict";
import type { EvidenceEvent, Json } from "../../../lib/provevi/evidence/event.ts";
import { problem } from "../../../lib/provevi/evidence/problem.ts";
import { addDecimal, callsOf } from "../../../lib/provevi/viewer/run_calls.ts";
import { verdictKind } from "../../../lib/provevi/viewer/run_verdict.ts";
import { factsOf, failureOf } from "../../../lib/provevi/viewer/run_facts.ts";
import { diffSteps, stepsOf } from "../../../lib/provevi/viewer/step_diff.ts";
import type { EventItem } from "../../../lib/provevi/live/live.ts";

let seq = 0;
function event(
  type: string,
  data: { [key: string]: Json },
  more: Partial<EvidenceEvent> = {},
): EvidenceEvent {
  const n = seq++;
  return {
    run_id: "run-20261201T120000Z-00000001",
    seq: n,
    time: `2026-12-01T12:00:${String(n).padStart(2, "0")}.000000Z`,
    type,
    component: "c",
    actor: "a",
    refs: [],
    data,
    payload: null,
    confidence: "observed",
    prev: null,
    trace_id: "t",
    span_id: `s${n}`,
    parent_span_id: "s0",
    started_at: `2026-12-01T12:00:${String(n).padStart(2, "0")}.000000Z`,
    ...more,
  };
}

/** Each event as a viewer at bodies sees it. */
function bodies(events: EvidenceEvent[]): EventItem[] {
  return events.map((e) => ({
    type: "event",
    run_id: e.run_id,
    seq: e.seq,
    time: e.time,
    event: e.type,
    data: e.data,
  }));
}

Deno.test("verdictKind() tells a run that cannot be checked here from one that does not verify, by codes alone", () => {
  const missing = problem("catalog.missing", "the committed bundle was not compared: no catalog");
  const route = problem("bundle.unreachable", "the committed bundle cannot be read: no route covers it");
  const broken = problem("chain.broken", "line 3 has prev …");
  assert.equal(verdictKind({ checked: true, ok: true, problems: [] }), "verified");
  assert.equal(verdictKind({ checked: true, ok: false, problems: [missing] }), "cannot_check");
  assert.equal(verdictKind({ checked: true, ok: false, problems: [missing, route] }), "cannot_check");
  assert.equal(verdictKind({ checked: true, ok: false, problems: [missing, broken] }), "does_not_verify");
  assert.equal(verdictKind({ checked: true, ok: false, problems: [] }), "does_not_verify");
  assert.equal(verdictKind({ checked: false, ok: true, problems: [] }), "running");
});

Deno.test("callsOf() reads model and tool calls from events, with errors, tokens and an exact cost", () => {
  seq = 0;
  const events = [
    event("run_created", { agent: "analyst", model: "test:" }),
    event("model_called", {
      model: "inline",
      answered_by: "claude-sonnet-4-5",
      input_tokens: 30,
      output_tokens: 12,
      cost: "0.000105",
    }),
    event("tool_called", { tool: "read_file", error: "NotFound", message: "no such file" }),
    event("model_called", {
      model: "inline",
      input_tokens: 50,
      output_tokens: 10,
      cost: "0.000030000000000001",
    }),
    event("tool_called", { tool: "write_file", error: null }),
    event("step_failed", { step: "model_called", error: "AI_APICallError", message: "overloaded" }),
    event("run_failed", { error: "AI_APICallError", message: "overloaded" }),
  ];
  const calls = callsOf(events, bodies(events), "bodies");
  assert.deepEqual(calls.calls.map((c) => [c.kind, c.name, c.status]), [
    ["model", "claude-sonnet-4-5", "ok"],
    ["tool", "read_file", "error"],
    ["model", "inline", "ok"],
    ["tool", "write_file", "ok"],
    ["model", null, "error"],
  ]);
  assert.deepEqual(calls.from, { model: "event", tool: "event" });
  assert.deepEqual(calls.tokens, { input: 80, output: 22 });
  assert.deepEqual(calls.cost, { amount: "0.000135000000000001", currency: null });
  assert.deepEqual(calls.errors.map((e) => [e.kind, e.what, e.detail]), [
    ["tool_error", "read_file", "NotFound"],
    ["step_failed", "model_called", "AI_APICallError"],
    ["run_failed", "run", "AI_APICallError"],
  ]);
  assert.deepEqual(failureOf(events, bodies(events), "bodies"), {
    seq: 6,
    error: "AI_APICallError",
    message: "overloaded",
    cancelled: false,
  });
  // Below bodies, the message stays out; below names, the error's class too.
  assert.equal(failureOf(events, bodies(events), "names")?.message, null);
  assert.equal(failureOf(events, bodies(events), null)?.error, null);
});

Deno.test("callsOf() takes a program's GenAI spans, and its refused hook marks the tool span refused", () => {
  seq = 0;
  const span = (op: string, attributes: { [key: string]: Json }) =>
    event("span_recorded", {
      name: op === "chat" ? "claude_code.llm_request" : "claude_code.tool",
      attributes: { "gen_ai.operation.name": op, ...attributes },
      end_time: "2026-12-01T12:00:59.000000Z",
      status: { code: 0, message: null },
    });
  const events = [
    event("run_created", { backend: "claude-code" }),
    event("hook_called", {
      event: "PreToolUse",
      tool: "Read",
      tool_use_id: "toolu_2",
      decision: "deny",
      reason: "outside",
    }),
    span("chat", {
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.usage.input_tokens": 21,
      "gen_ai.usage.output_tokens": 7,
    }),
    span("execute_tool", { "gen_ai.tool.name": "Read", "gen_ai.tool.call.id": "toolu_1" }),
    span("execute_tool", { "gen_ai.tool.name": "Read", "gen_ai.tool.call.id": "toolu_2" }),
    span("chat", {
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.usage.input_tokens": 30,
      "gen_ai.usage.output_tokens": 9,
    }),
  ];
  const calls = callsOf(events, bodies(events), "bodies");
  assert.deepEqual(calls.from, { model: "span", tool: "span" });
  assert.deepEqual(calls.calls.map((c) => [c.kind, c.name, c.status]), [
    ["model", "claude-sonnet-4-5", "ok"],
    ["tool", "Read", "ok"],
    ["tool", "Read", "refused"],
    ["model", "claude-sonnet-4-5", "ok"],
  ]);
  assert.deepEqual(calls.tokens, { input: 51, output: 16 });
  assert.deepEqual(calls.errors.map((e) => [e.kind, e.what, e.detail]), [["refused", "Read", "outside"]]);
  // The hooks count the tool calls of a program that sent no spans.
  const hooksOnly = events.filter((e) => e.type !== "span_recorded");
  assert.deepEqual(callsOf(hooksOnly, bodies(hooksOnly), "bodies").calls.map((c) => [c.from, c.status]), [[
    "hook",
    "refused",
  ]]);
});

Deno.test("factsOf() names the agent from names up, and says what the level hides rather than leaving it blank", () => {
  seq = 0;
  const created = event("run_created", {
    org: "acme",
    domain: "finance",
    env: "dev",
    agent: "analyst",
    agent_version: "a".repeat(64),
    model: "anthropic:claude-sonnet-4-5",
    backend: "agent",
  });
  const names = factsOf(created, "names");
  assert.equal(names.agent, "acme/finance/dev/analyst");
  assert.equal(names.model, "anthropic:claude-sonnet-4-5");
  assert.deepEqual(names.hidden, []);
  const structure = factsOf(created, null);
  assert.equal(structure.agent, null);
  assert.deepEqual(structure.hidden, ["agent", "agent_version", "model", "backend"]);
});

Deno.test("addDecimal() adds costs exactly, however many places", () => {
  assert.equal(addDecimal("0.1", "0.2"), "0.3");
  assert.equal(addDecimal("0", "12"), "12");
  assert.equal(addDecimal("1.000000000000000001", "2.5"), "3.500000000000000001");
});

Deno.test("diffSteps() pairs two runs' steps by place and marks the first that differs", () => {
  seq = 0;
  const run = (answer: string, extra: boolean) => {
    const events = [
      event("model_called", { model: "m", response_payload: "b".repeat(64) }, { payload: "a".repeat(64) }),
      event("tool_called", { tool: "read_file", error: null, result_payload: "d".repeat(64) }, {
        payload: "c".repeat(64),
      }),
      event("model_called", { model: "m", response_payload: answer }, { payload: "e".repeat(64) }),
      ...(extra ? [event("tool_called", { tool: "write_file", error: null })] : []),
    ];
    return stepsOf(events, bodies(events), "bodies");
  };
  const same = diffSteps(run("f".repeat(64), false), run("f".repeat(64), false));
  assert.equal(same.first, null);
  assert.equal(same.differing, 0);
  const other = diffSteps(run("f".repeat(64), false), run("0".repeat(64), true));
  assert.equal(other.first, 3);
  assert.deepEqual(other.pairs.map((p) => p.differs), [[], [], ["output"], ["missing"]]);
});

Deno.test("callsOf() shows a program's tool call that provrun refused at its hook (tool_called, ToolRefused) as refused", () => {
  const events = [
    event("model_called", { model: "claude", input_tokens: 3, output_tokens: 1 }),
    event("tool_called", { tool: "Read", call_id: "t1", executed_by: "program", error: null }),
    event("tool_called", { tool: "Read", call_id: "t2", executed_by: "program", error: "ToolRefused" }),
    event("tool_called", { tool: "Bash", call_id: "t3", executed_by: "program", error: "ToolError" }),
  ];
  const calls = callsOf(events, bodies(events), "bodies");
  assert.deepEqual(calls.calls.map((c) => [c.kind, c.name, c.status]), [
    ["model", "claude", "ok"],
    ["tool", "Read", "ok"],
    ["tool", "Read", "refused"],
    ["tool", "Bash", "error"],
  ]);
});
