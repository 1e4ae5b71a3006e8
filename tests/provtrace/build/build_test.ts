import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { verify } from "../../../lib/provevi/evidence/verify.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";
import { checkTrace } from "../../../lib/provtrace/build/check.ts";
import { queryTrace } from "../../../lib/provtrace/db/query.ts";
import { ask, builtRuns, dumpTrace, makeRuns, rewriteRun } from "../_runs.ts";
import { Catalog } from "../../../lib/provcat/catalog.ts";
import { bufferIo } from "../../../cli/_io.ts";
import { tour } from "../../../cli/tour.ts";
import { removeWritable } from "../../_files.ts";

Deno.test("buildTrace() of the same runs gives the same rows twice in a row, and a run built again (--run) keeps them", async () => {
  await using t = await makeRuns();
  const db = join(t.root, "trace.db");
  const first = await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
  assert.deepEqual(first.refused, []);
  assert.deepEqual(first.added.map((r) => r.run_id).sort(), [t.agentRun, t.callRun].sort());
  const before = dumpTrace(db);
  const second = await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
  assert.deepEqual(second.added, []);
  assert.deepEqual(second.present.sort(), [t.agentRun, t.callRun].sort());
  assert.deepEqual(dumpTrace(db), before);
  const again = await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog, runId: t.agentRun });
  assert.deepEqual(again.added.map((r) => r.run_id), [t.agentRun]);
  assert.deepEqual(dumpTrace(db), before);
});

Deno.test("a deleted trace database built again equals the first one", async () => {
  await using t = await makeRuns();
  const db = join(t.root, "trace.db");
  await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
  const first = dumpTrace(db);
  assert.ok(first.trace_spans!.length > 10);
  for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(db + suffix).catch(() => {});
  await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
  assert.deepEqual(dumpTrace(db), first);
});

Deno.test("buildTrace() refuses a run whose events and manifest were rewritten together after the seal, naming the bundle", async () => {
  await using t = await makeRuns();
  const folder = join(t.runs, t.callRun);
  await rewriteRun(folder, (events) => {
    const call = events.find((e) => e.type === "model_called")!;
    call.data.input_tokens = 4;
  });
  // The files agree with each other: only the committed bundle shows the change.
  assert.deepEqual((await verify(await new FileStore({ runs: t.runs }).readRun(t.callRun))).problems, []);
  const db = join(t.root, "trace.db");
  const result = await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
  assert.deepEqual(result.added.map((r) => r.run_id), [t.agentRun]);
  assert.equal(result.refused.length, 1);
  assert.equal(result.refused[0]!.run_id, t.callRun);
  assert.match(result.refused[0]!.problems.join("\n"), /bundle/);
  const rows = ask(
    db,
    "SELECT count(*) AS n FROM trace_model_calls WHERE run_id = '" + t.callRun + "'",
  );
  assert.equal(rows.rows[0]!.n, 0);
  // --allow-unverified adds it, marked.
  const forced = await buildTrace({
    store: "file",
    runs: t.runs,
    db,
    catalog: t.catalog,
    allowUnverified: true,
  });
  assert.deepEqual(forced.added.map((r) => [r.run_id, r.verified]), [[t.callRun, false]]);
  const source = ask(db, `SELECT verified, problems FROM trace_sources WHERE run_id = '${t.callRun}'`);
  assert.equal(source.rows[0]!.verified, 0);
  assert.match(String(source.rows[0]!.problems), /bundle/);
});

Deno.test("buildTrace() refuses a run it cannot verify without the catalog that holds its bundle, and says to pass one", async () => {
  await using t = await makeRuns();
  const result = await buildTrace({ store: "file", runs: t.runs, db: join(t.root, "trace.db") });
  assert.equal(result.refused.length, 2);
  assert.match(result.refused[0]!.problems.join("\n"), /no catalog was given.*--config/);
});

Deno.test("checkTrace() reports a run whose source changed after the build, and one that is gone", async () => {
  await using t = await makeRuns();
  const db = join(t.root, "trace.db");
  await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
  assert.equal((await checkTrace(db, { runs: t.runs, catalog: t.catalog })).ok, true);
  await rewriteRun(join(t.runs, t.agentRun), (events) => {
    events.find((e) => e.type === "model_called")!.data.output_tokens = 1;
  });
  const check = await checkTrace(db, { runs: t.runs, catalog: t.catalog });
  assert.equal(check.ok, false);
  const changed = check.runs.find((r) => r.run_id === t.agentRun)!;
  assert.equal(changed.state, "changed");
  assert.match(changed.problem!, /--run/);
  assert.equal(check.runs.find((r) => r.run_id === t.callRun)!.state, "same");
  await Deno.rename(join(t.runs, t.callRun), join(t.root, "moved"));
  assert.equal(
    (await checkTrace(db, { runs: t.runs, catalog: t.catalog })).runs.find((r) => r.run_id === t.callRun)!
      .state,
    "missing",
  );
});

Deno.test("checkTrace() reports a line changed in place with the manifest left alone, which still names the built last hash", async () => {
  await using t = await makeRuns();
  const db = join(t.root, "trace.db");
  await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
  const file = join(t.runs, t.agentRun, "evidence", "events.jsonl");
  const lines = (await Deno.readTextFile(file)).split("\n");
  lines[2] = lines[2]!.replace('"seq":2', '"seq":2,"x":1');
  await Deno.chmod(file, 0o644).catch(() => {});
  await Deno.writeTextFile(file, lines.join("\n"));
  const changed = (await checkTrace(db, { runs: t.runs, catalog: t.catalog })).runs.find((r) =>
    r.run_id === t.agentRun
  )!;
  assert.equal(changed.state, "changed");
  assert.match(changed.problem!, /line 4 no longer chains/);
});

Deno.test("the calls of one tool, with arguments and results, for an agent-backend run and a call-backend run", async () => {
  const { t, db } = await builtRuns();
  const read = ask(
    db,
    "SELECT run_id, arguments, result, executed_by FROM trace_tool_calls WHERE tool = 'read_file'",
  ).rows;
  assert.deepEqual(read.map((r) => [r.run_id, JSON.parse(String(r.arguments))]), [[t.agentRun, {
    path: "/input/revenue.csv",
  }]]);
  assert.match(String(read[0]!.result), /Q3,48\.2/);
  const search = ask(
    db,
    "SELECT run_id, arguments, result FROM trace_tool_calls WHERE tool = 'web_search' ORDER BY run_id",
  ).rows;
  assert.deepEqual(
    search.map((r) => [r.run_id, JSON.parse(String(r.arguments)), JSON.parse(String(r.result))]).sort(),
    [
      [t.agentRun, { q: "revenue Q3" }, { hits: 3 }],
      [t.callRun, { q: "revenue Q3" }, { hits: 5 }],
    ].sort(),
  );
  // Each tool call is a TOOL span; the ones the sandbox ran sit under the run's AGENT span.
  const spans = ask(
    db,
    `
    SELECT t.tool, s.kind, p.kind AS parent_kind FROM trace_tool_calls t
      JOIN trace_spans s ON s.run_id = t.run_id AND s.span_id = t.span_id
      JOIN trace_spans p ON p.run_id = s.run_id AND p.span_id = s.parent_span_id
    WHERE t.run_id = '${t.agentRun}' ORDER BY s.seq`,
  ).rows;
  assert.deepEqual(spans.map((r) => [r.tool, r.kind, r.parent_kind]), [
    ["list_files", "TOOL", "AGENT"],
    ["read_file", "TOOL", "AGENT"],
    ["web_search", "TOOL", "LLM"],
    ["grep_file", "TOOL", "AGENT"],
    ["write_file", "TOOL", "AGENT"],
  ]);
});

Deno.test("a message sent in five calls is stored once, and each call links to it", async () => {
  const { t, db } = await builtRuns();
  const prompt = ask(
    db,
    "SELECT hash FROM trace_messages WHERE role = 'user' AND part_kind = 'text' AND text LIKE 'What was the revenue growth%Write your results%'",
  ).rows;
  assert.equal(prompt.length, 1);
  const links = ask(
    db,
    `SELECT count(*) AS n, count(DISTINCT span_id) AS calls FROM trace_call_messages
     WHERE message_hash = '${prompt[0]!.hash}' AND direction = 'sent' AND run_id = '${t.agentRun}'`,
  ).rows[0]!;
  assert.deepEqual([links.n, links.calls], [5, 5]);
  // The reply of one call is what the next call sends: the tool call c1 is one row, received once, sent four times.
  const c1 = ask(db, "SELECT hash FROM trace_messages WHERE part_kind = 'tool_call' AND tool_call_id = 'c1'")
    .rows;
  assert.equal(c1.length, 1);
  const uses = ask(
    db,
    `SELECT direction, count(*) AS n FROM trace_call_messages WHERE message_hash = '${
      c1[0]!.hash
    }' GROUP BY direction ORDER BY direction`,
  ).rows;
  assert.deepEqual(uses.map((u) => [u.direction, u.n]), [["received", 1], ["sent", 4]]);
});

Deno.test("a tool the provider ran gets a span with timed false and no start, inside its model call's span", async () => {
  const { t, db } = await builtRuns();
  for (const run of [t.agentRun, t.callRun]) {
    const rows = ask(
      db,
      `
      SELECT s.kind, s.timed, s.start_time, s.end_time, s.duration_ms, p.kind AS parent_kind, t.provider_run,
        t.model_span_id = p.span_id AS in_its_call
      FROM trace_tool_calls t JOIN trace_spans s ON s.run_id = t.run_id AND s.span_id = t.span_id
        JOIN trace_spans p ON p.run_id = s.run_id AND p.span_id = s.parent_span_id
      WHERE t.run_id = '${run}' AND t.tool = 'web_search'`,
    ).rows;
    assert.deepEqual(rows.map((r) => ({ ...r })), [{
      kind: "TOOL",
      timed: 0,
      start_time: null,
      end_time: null,
      duration_ms: null,
      parent_kind: "LLM",
      provider_run: 1,
      in_its_call: 1,
    }]);
  }
  // Every other step of these runs was timed: its start and end are in the evidence.
  const untimed = ask(db, "SELECT count(*) AS n FROM trace_spans WHERE timed = 0").rows[0]!;
  assert.equal(untimed.n, 2);
});

Deno.test("the run's AGENT span comes from run_created and the end event; model calls are LLM spans with MLflow's attributes", async () => {
  const { t, db } = await builtRuns();
  const agent = ask(db, `SELECT * FROM trace_spans WHERE run_id = '${t.agentRun}' AND kind = 'AGENT'`).rows;
  assert.equal(agent.length, 1);
  const a = agent[0]!;
  assert.equal(a.seq, 0);
  assert.equal(a.parent_span_id, null);
  assert.equal(a.timed, 1);
  const attributes = JSON.parse(String(a.attributes));
  assert.equal(attributes["mlflow.spanType"], "AGENT");
  assert.match(attributes["mlflow.spanInputs"], /revenue growth in Q3/);
  assert.equal(attributes["mlflow.spanOutputs"], "Revenue grew 12% in Q3.");
  assert.equal(attributes["gen_ai.conversation.id"], "conv-7");
  const calls = ask(
    db,
    `
    SELECT c.*, s.attributes, s.parent_span_id = '${a.span_id}' AS under_agent FROM trace_model_calls c
      JOIN trace_spans s USING (run_id, span_id) WHERE run_id = '${t.agentRun}' ORDER BY c.seq`,
  ).rows;
  assert.deepEqual(
    calls.map((c) => [c.input_tokens, c.output_tokens, c.total_tokens, c.cache_read_input_tokens]),
    [
      [30, 12, 42, 0],
      [50, 10, 60, 30],
      [70, 14, 84, 50],
      [90, 20, 110, 70],
      [110, 9, 119, 90],
    ],
  );
  assert.ok(
    calls.every((c) => c.under_agent === 1 && c.message_format === "ai_sdk" && c.session_id === "conv-7"),
  );
  const first = JSON.parse(String(calls[0]!.attributes));
  assert.equal(first["mlflow.spanType"], "LLM");
  assert.deepEqual(first["mlflow.chat.tokenUsage"], {
    input_tokens: 30,
    output_tokens: 12,
    total_tokens: 42,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  });
  assert.equal(first["gen_ai.request.model"], calls[0]!.model);
  const tools = JSON.parse(String(calls[0]!.tools));
  assert.ok(tools.some((t: { function: { name: string } }) => t.function.name === "read_file"));
});

Deno.test("the build refuses a database not in WAL mode, and changes nothing in it", async () => {
  await using t = await makeRuns();
  const db = join(t.root, "other.db");
  const plain = new DatabaseSync(db);
  plain.exec(
    "PRAGMA journal_mode = DELETE; CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')",
  );
  plain.close();
  const before = await Deno.readFile(db);
  await assert.rejects(
    () => buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog }),
    /journal mode delete, and a trace database must be in WAL mode/,
  );
  assert.deepEqual(await Deno.readFile(db), before);
  // A trace database put in another mode is refused too, to build and to read.
  const trace = join(t.root, "trace.db");
  await buildTrace({ store: "file", runs: t.runs, db: trace, catalog: t.catalog });
  const conn = new DatabaseSync(trace);
  conn.exec("PRAGMA journal_mode = DELETE");
  conn.close();
  await assert.rejects(() => buildTrace({ store: "file", runs: t.runs, db: trace }), /WAL mode/);
  await assert.rejects(() => queryTrace(trace, "SELECT 1"), /WAL mode/);
});

Deno.test("a build of the tour's runs gives the same rows twice in a row, and again from a deleted database", async () => {
  const root = await Deno.makeTempDir({ prefix: "provtrace-tour-" });
  try {
    const runs = join(root, "runs");
    assert.equal(await tour(bufferIo(), { runs }), 0);
    assert.equal(await tour(bufferIo(), { runs }), 0);
    await using catalog = await Catalog.open({ configPath: join(root, "tour", "provcat.yaml") });
    const db = join(root, "trace.db");
    const first = await buildTrace({ store: "file", runs, db, catalog });
    assert.deepEqual([first.added.length, first.refused], [2, []]);
    const rows = dumpTrace(db);
    assert.equal(rows.trace_model_calls!.length, 2);
    const second = await buildTrace({ store: "file", runs, db, catalog });
    assert.deepEqual([second.added.length, second.present.length], [0, 2]);
    assert.deepEqual(dumpTrace(db), rows);
    for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(db + suffix).catch(() => {});
    await buildTrace({ store: "file", runs, db, catalog });
    assert.deepEqual(dumpTrace(db), rows);
  } finally {
    await removeWritable(root);
  }
});
