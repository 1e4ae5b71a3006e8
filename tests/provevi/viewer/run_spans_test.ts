import assert from "node:assert/strict";
import type { EvidenceEvent } from "../../../lib/provevi/mod.ts";
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
  const spans = spansOf(events, new Map(), false);
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
  const spans = spansOf(events, new Map(), false);
  assert.equal(spans.length, 30_003);
  assert.equal(spans[30_000]!.depth, 50);
  assert.deepEqual(spans.slice(-2).map((s) => [s.span_id, s.depth]), [["x", 1], ["y", 1]]);
  assert.equal(spans[0]!.status, "error", "a run without its end is not ok");
});
