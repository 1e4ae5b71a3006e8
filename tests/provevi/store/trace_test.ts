import assert from "node:assert/strict";
import { join } from "node:path";
import type { EvidenceStore } from "../../../lib/provevi/store/store.ts";
import { ProveviError } from "../../../lib/provevi/evidence/errors.ts";
import { PostgresStore } from "../../../lib/provevi/postgres/postgres_store.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { EventChain, type EventInit } from "../../../lib/provevi/evidence/chain.ts";
import { formatMicros } from "../../../lib/provevi/evidence/event.ts";
import type { TraceSpan } from "../../../lib/provevi/evidence/run_spans.ts";
import { readSpansFile, type StoredSpan } from "../../../lib/provevi/evidence/spans_file.ts";
import { trace, traceIdOf } from "../../../lib/provevi/store/trace.ts";
import { freshDatabase } from "../postgres/_pg.ts";
import { peerTest } from "../../_peers.ts";

const TA = "a".repeat(32); // run-a's own trace
const TB = "b".repeat(32); // run-b's, which an agent program of run-a joined
const ROOT_A = "a000000000000001", CHAT = "a000000000000002", TOOL = "a000000000000003";
const LIBRARY = "a000000000000004", LYING = "a000000000000005";
const ROOT_B = "b000000000000001", RECEIVED = "b000000000000002";

const at = (ms: number) => formatMicros(Date.UTC(2026, 10, 30, 10, 0, 0) * 1000 + ms * 1000);

function indexSpan(s: Partial<StoredSpan> & Pick<StoredSpan, "trace_id" | "span_id" | "name">): StoredSpan {
  return {
    parent_span_id: null,
    kind: 0,
    scope: { name: "provrun", version: null },
    start_time: at(0),
    end_time: at(1),
    status: { code: 0, message: null },
    attributes: {},
    events: [],
    links: [],
    ...s,
  };
}

/** Writes a run: its events (each init is one event) and its span index, and seals it. */
async function writeRun(
  store: EvidenceStore,
  runId: string,
  inits: Omit<EventInit, "actor" | "component">[],
  spans: StoredSpan[],
): Promise<string> {
  const writer = await store.openRun(runId);
  const chain = new EventChain(runId);
  for (const init of inits) {
    const next = chain.next({ actor: "ada", component: "RunContext", ...init });
    await writer.append(next.line, next.event);
    chain.accept(next);
  }
  await store.addSpans!(runId, spans);
  await writer.seal();
  return writer.folder;
}

/**
 * Two runs. run-a (trace TA): its root, a model call with an index span, a tool call with none, a library span
 * that only the index holds, a step whose index span names another parent than its event, and a span its agent
 * program sent into trace TB. run-b (trace TB): its root.
 */
async function writeRuns(store: EvidenceStore): Promise<void> {
  const root = { trace_id: TA, span_id: ROOT_A, parent_span_id: null };
  const step = (span_id: string) => ({ trace_id: TA, span_id, parent_span_id: ROOT_A });
  const folder = await writeRun(store, "run-a", [
    { type: "run_created", time: at(0), ...root, data: { agent: "revenue-question", org: "acme" } },
    { type: "model_called", time: at(30), started_at: at(10), ...step(CHAT), data: { model: "m" } },
    {
      type: "tool_called",
      time: at(45),
      started_at: at(40),
      ...step(TOOL),
      data: { tool: "read_file", error: "NotCapable", message: "no" },
    },
    { type: "sandbox_completed", time: at(50), started_at: at(48), ...step(LYING), data: {} },
    {
      type: "span_recorded",
      time: at(60),
      started_at: at(55),
      trace_id: TB,
      span_id: RECEIVED,
      parent_span_id: ROOT_B,
      data: { name: "claude_code.tool", end_time: at(58), kind: 1, scope: "claude", attributes: { x: 1 } },
    },
    { type: "run_completed", time: at(100), ...root, data: { status: "completed" } },
  ], [
    indexSpan({ ...step(CHAT), name: "chat m", start_time: at(10), end_time: at(29.5) }),
    indexSpan({ ...step(LIBRARY), name: "library.step", start_time: at(20), end_time: at(25) }),
    // The index says another parent and trace: the hash-chained event wins.
    indexSpan({
      trace_id: TB,
      span_id: LYING,
      parent_span_id: CHAT,
      name: "sandbox_completed",
      start_time: at(48),
      end_time: at(50),
    }),
    // The index's copy of the received span is not read: the event holds the whole span.
    indexSpan({ trace_id: TB, span_id: RECEIVED, parent_span_id: ROOT_B, name: "edited" }),
  ]);
  // A line cut by a kill and a line that is not a span: the index is not the record, and is read around them.
  await Deno.writeTextFile(join(folder, "spans.jsonl"), '{"cut\n[1, 2]\n', { append: true });
  await writeRun(store, "run-b", [
    { type: "run_created", time: at(0), trace_id: TB, span_id: ROOT_B, parent_span_id: null, data: {} },
    { type: "run_completed", time: at(200), trace_id: TB, span_id: ROOT_B, parent_span_id: null, data: {} },
  ], []);
}

const STORES: [string, (dir: string) => Promise<{ store: EvidenceStore; drop?: () => Promise<void> }>][] = [
  ["file", (dir) => Promise.resolve({ store: new FileStore({ runs: join(dir, "runs") }) })],
  [
    "sqlite",
    (dir) =>
      Promise.resolve({ store: new SqliteStore(join(dir, "evidence.db"), { runs: join(dir, "runs") }) }),
  ],
  ["postgres", async (dir) => {
    const db = await freshDatabase();
    return { store: await PostgresStore.open(db.uri, { runs: join(dir, "runs") }), drop: db.drop };
  }],
];

const brief = (s: TraceSpan) => [s.run_id, s.span_id, s.parent_span_id, s.name, s.source, s.seqs.join(",")];

for (const [kind, open] of STORES) {
  const withRuns = async (fn: (store: EvidenceStore) => Promise<void>) => {
    const dir = await Deno.makeTempDir({ prefix: "trace-" });
    let drop: (() => Promise<void>) | undefined;
    try {
      const opened = await open(dir);
      drop = opened.drop;
      await using store = opened.store;
      await writeRuns(store);
      await fn(store);
    } finally {
      await drop?.();
      await Deno.remove(dir, { recursive: true });
    }
  };

  peerTest(kind === "postgres" ? "postgres" : null, {
    name:
      `trace() on the ${kind} store gives a run's spans with their parents and timing, the events winning`,
    fn: () =>
      withRuns(async (store) => {
        const spans = await trace(store, TA);
        assert.deepEqual(spans.map(brief), [
          ["run-a", ROOT_A, null, "invoke_agent revenue-question", "evidence", "0,5"],
          ["run-a", CHAT, ROOT_A, "chat m", "index", "1"],
          ["run-a", LIBRARY, ROOT_A, "library.step", "index", ""],
          ["run-a", TOOL, ROOT_A, "execute_tool read_file", "evidence", "2"],
          ["run-a", LYING, ROOT_A, "sandbox_completed", "index", "3"],
        ]);
        const [root, chat, , tool] = spans;
        assert.deepEqual([root!.start_time, root!.end_time, root!.duration_ms], [at(0), at(100), 100]);
        assert.deepEqual([chat!.start_time, chat!.end_time, chat!.duration_ms], [at(10), at(29.5), 19.5]);
        assert.deepEqual(tool!.status, { code: 2, message: "NotCapable: no" });
        assert.equal(tool!.duration_ms, 5);
        assert.ok(spans.every((s) => s.trace_id === TA));
      }),
  });

  peerTest(kind === "postgres" ? "postgres" : null, {
    name:
      `trace() on the ${kind} store gives a trace across runs: a span an agent program sent, from its event`,
    fn: () =>
      withRuns(async (store) => {
        const spans = await trace(store, `tr-${TB.toUpperCase()}`);
        assert.deepEqual(spans.map(brief), [
          ["run-b", ROOT_B, null, "run", "evidence", "0,1"],
          ["run-a", RECEIVED, ROOT_B, "claude_code.tool", "evidence", "4"],
        ]);
        const received = spans[1]!;
        assert.deepEqual([received.kind, received.scope.name, received.attributes], [1, "claude", { x: 1 }]);
        assert.equal(received.duration_ms, 3);
        assert.deepEqual(await trace(store, "c".repeat(32)), []);
      }),
  });
}

Deno.test("traceIdOf() takes 32 hex digits or MLflow's tr- form, and refuses anything else in one line", () => {
  assert.equal(traceIdOf("AB".repeat(16)), "ab".repeat(16));
  assert.equal(traceIdOf(`tr-${"c".repeat(32)}`), "c".repeat(32));
  for (
    const bad of ["", "abc", "g".repeat(32), "0".repeat(32), `${"a".repeat(32)}\n`, `x-${"a".repeat(32)}`]
  ) {
    assert.throws(() => traceIdOf(bad), (e: Error) => e instanceof ProveviError && !e.message.includes("\n"));
  }
});

Deno.test("readSpansFile() reads a span index that is a link as none, and leaves out lines that are not spans", async () => {
  const dir = await Deno.makeTempDir({ prefix: "spans-file-" });
  try {
    const good = indexSpan({ trace_id: TA, span_id: CHAT, name: "chat m" });
    await Deno.writeTextFile(
      join(dir, "other.jsonl"),
      [JSON.stringify(good), "not json", JSON.stringify({ ...good, span_id: "x" }), '{"cut'].join("\n"),
    );
    await Deno.symlink(join(dir, "other.jsonl"), join(dir, "spans.jsonl"));
    assert.deepEqual(await readSpansFile(dir), []);
    await Deno.remove(join(dir, "spans.jsonl"));
    await Deno.rename(join(dir, "other.jsonl"), join(dir, "spans.jsonl"));
    assert.deepEqual(await readSpansFile(dir), [good]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
