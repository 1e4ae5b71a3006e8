import assert from "node:assert/strict";
import { EventChain, type EventInit } from "../../../lib/provevi/evidence/chain.ts";
import { formatMicros } from "../../../lib/provevi/evidence/event.ts";
import { runSpans, spanTree, type TraceSpan } from "../../../lib/provevi/evidence/run_spans.ts";

const T = "a".repeat(32);
const at = (ms: number) => formatMicros(Date.UTC(2026, 10, 30, 10, 0, 0) * 1000 + ms * 1000);
const id = (n: number) => n.toString(16).padStart(16, "0");

function span(n: number, parent: number | null, start = n): TraceSpan {
  return {
    trace_id: T,
    span_id: id(n),
    parent_span_id: parent === null ? null : id(parent),
    name: `s${n}`,
    kind: 0,
    scope: { name: "x", version: null },
    status: { code: 0, message: null },
    attributes: {},
    events: [],
    links: [],
    run_id: "run-1",
    start_time: at(start),
    end_time: at(start + 1),
    duration_ms: 1,
    source: "index",
    seqs: [],
  };
}

Deno.test("spanTree() nests each span under its parent, siblings by start, a circle of parents last", () => {
  const tree = spanTree([span(3, 1), span(1, null), span(2, 1, 5), span(4, 3), span(7, 8), span(8, 7)]);
  assert.deepEqual(tree.map((t) => [t.span.name, t.depth]), [
    ["s1", 0],
    ["s3", 1],
    ["s4", 2],
    ["s2", 1],
    ["s7", 0],
    ["s8", 0],
  ]);
});

Deno.test("spanTree() takes a chain of parents 30,000 deep without recursion, its depth held at 50", () => {
  const chain = Array.from({ length: 30_000 }, (_, i) => span(i + 1, i === 0 ? null : i));
  const tree = spanTree(chain);
  assert.equal(tree.length, 30_000);
  assert.equal(tree.at(-1)!.depth, 50);
  assert.equal(tree.at(-1)!.span.name, "s30000");
});

Deno.test("runSpans() makes a run's spans from its events alone: the root to the run's end, an open run's root open", () => {
  const chain = new EventChain("run-1");
  const inits: Omit<EventInit, "component" | "actor">[] = [
    { type: "run_created", time: at(0), data: { agent: "q" }, span_id: id(1), parent_span_id: null },
    {
      type: "model_called",
      time: at(20),
      started_at: at(5),
      data: { model: "m" },
      span_id: id(2),
      parent_span_id: id(1),
    },
    {
      type: "step_failed",
      time: at(21),
      data: { error: "E", message: "m" },
      span_id: id(2),
      parent_span_id: id(1),
    },
  ];
  const events = inits.map((init) => {
    const next = chain.next({ component: "c", actor: "a", trace_id: T, ...init });
    chain.accept(next);
    return next.event;
  });
  const open = runSpans(events, []);
  assert.deepEqual(open.map((s) => [s.name, s.parent_span_id, s.end_time, s.source, s.seqs]), [
    ["invoke_agent q", null, null, "evidence", [0]],
    ["chat m", id(1), at(21), "evidence", [1, 2]],
  ]);
  assert.deepEqual(open[1]!.status, { code: 2, message: "E: m" });
  assert.equal(open[1]!.duration_ms, 16);
  const end = chain.next({
    type: "run_completed",
    time: at(30),
    component: "c",
    actor: "a",
    trace_id: T,
    span_id: id(1),
    data: {},
  });
  const closed = runSpans([...events, end.event], []);
  assert.deepEqual([closed[0]!.end_time, closed[0]!.duration_ms, closed[0]!.seqs], [at(30), 30, [0, 3]]);
});
