import assert from "node:assert/strict";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import { spansOf } from "../../../lib/provevi/viewer/run_spans.ts";

function event(seq: number, span: string, parent: string | null, type = "tool_called"): EvidenceEvent {
  const time = `2026-11-30T12:00:${String(seq % 60).padStart(2, "0")}.000000Z`;
  return {
    run_id: "r",
    seq,
    time,
    type,
    component: "c",
    actor: "a",
    refs: [],
    data: {},
    payload: null,
    confidence: "observed",
    prev: null,
    trace_id: "t",
    span_id: span,
    parent_span_id: parent,
    started_at: time,
  };
}

Deno.test("spansOf() nests the spans depth first, siblings by start, and an orphan under the root", () => {
  const events = [
    event(0, "root", null, "run_created"),
    event(1, "b", "root"),
    event(2, "b1", "b"),
    event(3, "c", "root"),
    event(4, "orphan", "missing"),
    event(5, "b", "root"),
    event(6, "root", null, "run_completed"),
  ];
  const spans = spansOf(events, new Map(), { running: false });
  assert.deepEqual(spans.map((s) => [s.span_id, s.depth]), [["root", 0], ["b", 1], ["b1", 2], ["c", 1], [
    "orphan",
    1,
  ]]);
  const b = spans.find((s) => s.span_id === "b")!;
  assert.deepEqual([b.seqs, b.event_count], [[1, 5], 2]);
  assert.equal(spans[0]!.status, "ok");
});

Deno.test("spansOf() takes a chain of 30,000 spans without running out of stack, and shows a circle of parents under the root", () => {
  const events = [event(0, "root", null, "run_created")];
  for (let i = 1; i <= 30_000; i++) events.push(event(i, `s${i}`, i === 1 ? "root" : `s${i - 1}`));
  events.push(event(30_001, "x", "y"), event(30_002, "y", "x"));
  const spans = spansOf(events, new Map(), { running: false });
  assert.equal(spans.length, 30_003);
  assert.equal(spans[30_000]!.depth, 50);
  assert.deepEqual(spans.slice(-2).map((s) => [s.span_id, s.depth]), [["x", 1], ["y", 1]]);
  assert.equal(spans[0]!.status, "error", "a run without its end is not ok");
});

Deno.test("spansOf() places the spans a program sent under their own parents, a step's span once", () => {
  const events = [
    event(0, "root", null, "run_created"),
    event(1, "program", "root", "sandbox_started"),
    event(2, "root", null, "spans_received"),
    event(3, "program", "root", "sandbox_completed"),
    event(4, "root", null, "run_completed"),
  ];
  const at = Date.parse("2026-11-30T12:00:01Z") * 1000;
  const received = [
    { id: "interaction", parent: "program", name: "claude_code.interaction", failed: false },
    { id: "llm", parent: "interaction", name: "claude_code.llm_request", failed: true },
    { id: "program", parent: "root", name: "a program's copy of a step", failed: false },
  ].map((r) => ({
    seq: 2,
    trace_id: "t",
    span_id: r.id,
    parent_span_id: r.parent,
    name: r.name,
    start_us: at,
    end_us: at + 500_000,
    failed: r.failed,
  }));
  const spans = spansOf(events, new Map(), { running: false, received });
  assert.deepEqual(spans.map((s) => [s.span_id, s.depth]), [
    ["root", 0],
    ["program", 1],
    ["interaction", 2],
    ["llm", 3],
  ]);
  const llm = spans.find((s) => s.span_id === "llm")!;
  assert.deepEqual([llm.name, llm.status, llm.seqs, llm.end_us - llm.start_us], [
    "claude_code.llm_request",
    "error",
    [2],
    500_000,
  ]);
  assert.equal(spans.find((s) => s.span_id === "program")!.seqs.length, 2, "the step's own events");
});
