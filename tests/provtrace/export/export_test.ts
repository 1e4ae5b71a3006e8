import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore } from "../../../lib/provevi/runs/open_store.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";
import { exportTrace } from "../../../lib/provtrace/export/export.ts";
import { makeRuns } from "../_runs.ts";

type Indexed = { t: Awaited<ReturnType<typeof makeRuns>>; uri: string; db: string };
let indexed: Promise<Indexed> | null = null;

/**
 * The runs in a sqlite store, a reward on each, and their trace database: made once for this file's tests, which
 * only read them, and removed when the process ends.
 */
function indexedRuns(): Promise<Indexed> {
  indexed ??= makeIndexedRuns();
  return indexed;
}

async function makeIndexedRuns(): Promise<Indexed> {
  const t = await makeRuns({ store: (root) => `sqlite:///${join(root, "evidence.db")}` });
  globalThis.addEventListener("unload", () => {
    new Deno.Command("chmod", { args: ["-R", "u+w", t.root] }).outputSync();
    Deno.removeSync(t.root, { recursive: true });
  });
  const uri = `sqlite:///${join(t.root, "evidence.db")}`;
  {
    await using store = new SqliteStore(join(t.root, "evidence.db"), { runs: t.runs });
    await store.assess(t.agentRun, "reward", 0.9, { source: "grader" });
    await store.assess(t.callRun, "reward", 0.2, { source: "grader" });
  }
  const db = join(t.root, "trace.db");
  const built = await buildTrace({ store: uri, runs: t.runs, db, catalog: t.catalog });
  assert.deepEqual(built.refused, []);
  return { t, uri, db };
}

Deno.test("an export line's provenance verifies against the store: the event's line hash, the run's last hash, the run", async () => {
  const { t, uri, db } = await indexedRuns();
  const lines =
    (await exportTrace(db, { runs: t.runs, stores: [uri], catalog: t.catalog, kind: "steps" })).lines;
  assert.equal(lines.length, 6);
  await using store = await openStore(uri, { readOnly: true, runs: t.runs });
  for (const line of lines) {
    const p = line.provenance;
    assert.equal(p.store_uri, uri);
    assert.equal(p.verified, true);
    const record = await store.readRun(p.run_id);
    const read = readEventsText((await record.eventsText())!);
    assert.equal(sha256Hex(read.lines[p.seq!]!), p.line_hash);
    assert.equal(read.events[p.seq!]!.type, "model_called");
    assert.equal(read.events[p.seq!]!.span_id, p.span_id);
    assert.equal(JSON.parse((await record.manifestText())!).last_hash, p.last_hash);
    assert.equal((await verifyRun(record, { store, catalog: t.catalog })).ok, true);
  }
});

Deno.test("the steps export gives state, action and result; the filters choose runs by agent, status and assessment", async () => {
  const { t, uri, db } = await indexedRuns();
  const steps = (await exportTrace(db, {
    runs: t.runs,
    stores: [uri],
    catalog: t.catalog,
    kind: "steps",
    agent: "analyst",
  })).lines;
  assert.equal(steps.length, 5);
  const third = steps[2]!;
  assert.deepEqual((third.action as { kind: string }[]).map((p) => p.kind), [
    "tool_call",
    "tool_return",
    "tool_call",
  ]);
  assert.deepEqual(
    (third.result as { tool: string; executed_by: string }[]).map((r) => [r.tool, r.executed_by]),
    [["web_search", "provider"], ["grep_file", "sandbox"]],
  );
  assert.equal((third.state as unknown[]).length, 5);
  assert.deepEqual(third.assessments, [{
    name: "reward",
    value: 0.9,
    rationale: null,
    source: "grader",
    on: "run",
  }]);
  assert.equal(
    (await exportTrace(db, {
      runs: t.runs,
      stores: [uri],
      catalog: t.catalog,
      kind: "steps",
      agent: "acme/demo/dev/analyst",
    })).lines
      .length,
    5,
  );
  assert.equal(
    (await exportTrace(db, {
      runs: t.runs,
      stores: [uri],
      catalog: t.catalog,
      kind: "steps",
      status: "completed",
    })).lines
      .length,
    6,
  );
  assert.equal(
    (await exportTrace(db, {
      runs: t.runs,
      stores: [uri],
      catalog: t.catalog,
      kind: "steps",
      status: "failed",
    })).lines
      .length,
    0,
  );
  assert.equal(
    (await exportTrace(db, {
      runs: t.runs,
      stores: [uri],
      catalog: t.catalog,
      kind: "steps",
      experiment: "credit/q",
    })).lines
      .length,
    0,
  );
  const rewarded = (await exportTrace(db, {
    runs: t.runs,
    stores: [uri],
    catalog: t.catalog,
    kind: "steps",
    assessment: "reward>=0.5",
  }))
    .lines;
  assert.deepEqual([...new Set(rewarded.map((l) => l.run_id))], [t.agentRun]);
  assert.deepEqual([
    ...new Set(
      (await exportTrace(db, {
        runs: t.runs,
        stores: [uri],
        catalog: t.catalog,
        kind: "steps",
        assessment: "reward<0.5",
      }))
        .lines.map((
          l,
        ) => l.run_id),
    ),
  ], [
    t.callRun,
  ]);
  await assert.rejects(
    () =>
      exportTrace(db, {
        runs: t.runs,
        stores: [uri],
        catalog: t.catalog,
        kind: "steps",
        assessment: "reward>=high",
      }),
    /NAME>=VALUE/,
  );
});

Deno.test("the sft export: OpenAI chat lines per call or per run, with tools, each tool message after its call", async () => {
  const { t, uri, db } = await indexedRuns();
  assert.equal(
    (await exportTrace(db, { runs: t.runs, stores: [uri], catalog: t.catalog, kind: "sft" })).lines.length,
    6,
  );
  const perRun =
    (await exportTrace(db, { runs: t.runs, stores: [uri], catalog: t.catalog, kind: "sft", per: "run" }))
      .lines;
  assert.deepEqual(perRun.map((l) => l.provenance.run_id).sort(), [t.agentRun, t.callRun].sort());
  const agent = perRun.find((l) => l.provenance.run_id === t.agentRun)!;
  const messages = agent.messages as {
    role: string;
    content: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  assert.deepEqual(messages.map((m) => m.role), [
    "user",
    "assistant",
    "tool",
    "assistant",
    "tool",
    "assistant",
    "tool",
    "tool",
    "assistant",
    "tool",
    "assistant",
  ]);
  assert.equal(messages.at(-1)!.content, "Revenue grew 12% in Q3.");
  assert.deepEqual(JSON.parse(messages[3]!.tool_calls![0]!.function.arguments), {
    path: "/input/revenue.csv",
  });
  const asked = new Set<string>();
  for (const m of messages) {
    for (const c of m.tool_calls ?? []) asked.add(c.id);
    if (m.role === "tool") {
      assert.ok(asked.has(m.tool_call_id!), `${m.tool_call_id} answers no call before it`);
    }
  }
  assert.ok((agent.tools as { function: { name: string } }[]).some((t) => t.function.name === "write_file"));
  assert.equal(agent.provenance.verified, true);
  assert.match(agent.provenance.line_hash!, /^[0-9a-f]{64}$/);
});
