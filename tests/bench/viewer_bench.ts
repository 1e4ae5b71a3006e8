/**
 * The viewer's speed.
 *
 * 1. The runs page's data for a sqlite store of 100,000 runs (`listRuns` and its JSON; then through the whole
 *    handler too): the first page, a page filtered by status and agent, and the 1,000th page (offset
 *    49,950), each as a ratio to the same queries (the agent's classes, the page with each row's last event,
 *    tokens and cancellation, and its count, as `listRuns` writes them) through `node:sqlite` directly on the
 *    same file, with the same indexes, in the same run. Targets: at most 1.5x, and under 50 ms.
 * 2. A run of 1,000 events: the time from the request to the run page's data (verdict, events, timeline; all
 *    its events on one page, `?limit=1000`), as
 *    a ratio to the check the page shows (`verifyRun` alone). Target: under 100 ms.
 * 3. A run of 20,000 steps (20,000 spans): the time to its first page's data, and the page's size, against its
 *    check alone. Target: under 300 ms, and a page that does not grow with the run.
 * 4. A run with five 12 MB model answers (each call's request holding the answers before it: 180 MB of
 *    payloads), served by `prove ui` itself (a child, as the `prove` task starts it): 10 requests for its
 *    page at once, then 10 requests for 10 different pages of it at once (which share the run's check, not
 *    their pages). Targets:
 *    each answered within 5 s, and the server's peak memory (VmHWM) under 500 MB. The references, measured in
 *    the same run: the run's check alone (`verifyRun`, which every page makes), and the idle server's memory.
 * 5. The runs page's search at 100,000 runs (`_search_bench.ts`): free text and filters through the whole
 *    handler, against the same SQL through `node:sqlite` on the same index. Target: under 50 ms.
 * @module
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/policy.ts";
import { viewerHandler } from "../../lib/provevi/viewer/viewer_server.ts";
import { listRuns } from "../../lib/provevi/runs/list_runs.ts";
import { proveUi, writeRun } from "../provevi/viewer/_runs.ts";
import { median, report } from "./_report.ts";
import { searchBench } from "./_search_bench.ts";

const PORT = 5000;
const TOKEN = "b".repeat(64);
const request = (path: string) =>
  new Request(`http://127.0.0.1:${PORT}/t/${TOKEN}${path}`, { headers: { host: `127.0.0.1:${PORT}` } });

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bench-viewer-" });
  try {
    await runsPage(dir);
    await runPage(dir);
    await manySpans(dir);
    await largePayloads(dir);
    await searchBench(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function runsPage(dir: string): Promise<void> {
  const RUNS = 100_000, AGENTS = 1_000;
  const path = join(dir, "big.db");
  await using store = new SqliteStore(path, { runs: join(dir, "runs") });
  const db = store.db;
  db.exec("BEGIN");
  const run = db.prepare(
    // an ended run is sealed, as a writer leaves it (sealed_at is its end): a row ended but never sealed is a
    // writer killed at its seal, which listRuns looks into
    `INSERT INTO provevi_runs (run_id, folder, org, domain, env, actor, mode, agent, agent_version, status,
       started_at, ended_at, sealed_at) VALUES (?, ?, 'acme', 'demo', 'dev', 'bench', 'strict', ?, ?, ?, ?, ?, ?7)`,
  );
  const agent = db.prepare(
    "INSERT INTO provevi_agents (agent, org, domain, env, name, first_run) VALUES (?, 'acme', 'demo', 'dev', ?, ?)",
  );
  const event = db.prepare(
    `INSERT INTO provevi_events (run_id, seq, time, type, component, actor, confidence, line)
     VALUES (?, ?, ?, ?, 'bench', 'bench', 'observed', ?)`,
  );
  const id = (r: number) =>
    `run-2026${String(1000000 + r).slice(1)}Z-${(r * 2654435761 % 2 ** 32).toString(16).padStart(8, "0")}`;
  for (let a = 0; a < AGENTS; a++) agent.run(`acme/demo/dev/agent-${a}`, `agent-${a}`, id(a));
  for (let r = 0; r < RUNS; r++) {
    const failed = r % 10 === 0;
    run.run(
      id(r),
      `/runs/${id(r)}`,
      `acme/demo/dev/agent-${r % AGENTS}`,
      "f".repeat(64),
      failed ? "failed" : "completed",
      "2026-11-29T12:00:00.000000Z",
      "2026-11-29T12:01:00.000000Z",
    );
    event.run(
      id(r),
      0,
      "2026-11-29T12:00:00.000000Z",
      "run_created",
      `{"data":{"model":"test:answer"},"seq":0}`,
    );
    event.run(
      id(r),
      1,
      "2026-11-29T12:00:30.000000Z",
      "model_called",
      `{"data":{"input_tokens":40,"output_tokens":12},"seq":1}`,
    );
    event.run(
      id(r),
      2,
      "2026-11-29T12:01:00.000000Z",
      failed ? "run_failed" : "run_completed",
      failed
        ? `{"data":{"error":"${r % 20 === 0 ? "CancelledError" : "APICallError"}"},"seq":2}`
        : `{"data":{},"seq":2}`,
    );
  }
  db.exec("COMMIT");
  const handle = viewerHandler(store, { policy: TelemetryPolicy.denyAll(), port: PORT, token: TOKEN });
  const raw = new DatabaseSync(path, { readOnly: true });
  for (
    const [name, query, qs] of [
      ["first page", {}, ""],
      [
        "page filtered by status and agent",
        { status: "failed", agent: "agent-10" },
        "status=failed&agent=agent-10",
      ],
      ["1,000th page", { offset: 49_950 }, "offset=49950"],
    ] as const
  ) {
    const viewer: number[] = [];
    const handler: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < 41; i++) {
      let t = performance.now();
      const body = JSON.stringify(await listRuns(store, { ...query, limit: 50 }));
      viewer.push(performance.now() - t);
      if (body.length < 100) throw new Error(`the ${name} is empty`);
      t = performance.now();
      await (await handle(request(`/api/runs?limit=50&${qs}`))).text();
      handler.push(performance.now() - t);
      t = performance.now();
      directPage(raw, query);
      direct.push(performance.now() - t);
    }
    report(
      `runs page data (listRuns and JSON), ${name}, 100,000 runs (vs node:sqlite)`,
      median(viewer),
      median(direct),
      "ms",
      "<= 1.5, and under 50 ms",
    );
    report(
      `runs page through the whole handler (guard, listRuns, JSON, response), ${name} (vs node:sqlite)`,
      median(handler),
      median(direct),
      "ms",
      "under 50 ms",
    );
  }
  raw.close();
}

/**
 * The queries of a page as listRuns makes them (its SQL written out, on the same file with the same indexes),
 * through node:sqlite alone: the agent's classes, the page with each row's events read, and the count.
 */
function directPage(db: DatabaseSync, query: { status?: string; agent?: string; offset?: number }): void {
  const where: string[] = [];
  const params: string[] = [];
  if (query.agent) {
    const classes = (db.prepare("SELECT agent FROM provevi_agents WHERE name = ? ORDER BY agent")
      .all(query.agent) as { agent: string }[]).map((r) => r.agent);
    where.push(`r.agent IN (${classes.map(() => "?").join(", ")})`);
    params.push(...classes);
  }
  const cancelled = (r: string) =>
    `EXISTS (SELECT 1 FROM provevi_events c INDEXED BY provevi_events_cancelled WHERE c.run_id = ${r}.run_id
      AND c.type = 'run_failed' AND json_extract(c.line, '$.data.error') = 'CancelledError')`;
  if (query.status === "failed") {
    where.push(
      `r.status = 'failed' AND r.run_id NOT IN (SELECT u.run_id FROM provevi_runs u WHERE u.sealed_at IS NULL)
      AND NOT ${cancelled("r")}`,
    );
  }
  const whereSql = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const rows = db.prepare(
    `WITH page AS MATERIALIZED (
      SELECT r.run_id, r.folder, r.status, r.started_at, r.ended_at, r.agent, r.agent_version, r.experiment,
        r.experiment_pin
      FROM provevi_runs r ${whereSql} ORDER BY r.run_id DESC LIMIT ?${query.offset ? " OFFSET ?" : ""}
    )
    SELECT p.*, json_extract(e.line, '$.data.model') AS model, json_extract(e.line, '$.data.writer') AS writer,
      (SELECT l.seq FROM provevi_events l WHERE l.run_id = p.run_id ORDER BY l.seq DESC LIMIT 1) AS last_seq,
      (SELECT l.time FROM provevi_events l WHERE l.run_id = p.run_id ORDER BY l.seq DESC LIMIT 1) AS last_time,
      (SELECT sum(coalesce(json_extract(t.line, '$.data.input_tokens'), 0)
          + coalesce(json_extract(t.line, '$.data.output_tokens'), 0))
       FROM provevi_events t WHERE t.run_id = p.run_id AND t.type = 'model_called') AS tokens,
      CASE WHEN p.status = 'failed' THEN ${cancelled("p")} END AS cancelled
    FROM page p LEFT JOIN provevi_events e ON e.run_id = p.run_id AND e.seq = 0
    ORDER BY p.run_id DESC`,
  ).all(...params, 50, ...(query.offset ? [query.offset] : [])) as { run_id: string }[];
  if (rows.length === 50 || query.offset) {
    db.prepare(`SELECT count(*) AS n FROM provevi_runs r ${whereSql}`).get(...params);
  }
}

async function runPage(dir: string): Promise<void> {
  const runs = join(dir, "file-runs");
  const store = new FileStore({ runs });
  const runId = "run-20261130T120000Z-00000001";
  const writer = await store.openRun(runId);
  const chain = new EventChain(runId);
  const add = async (init: Parameters<EventChain["next"]>[0]) => {
    const next = chain.next(init);
    await writer.append(next.line, next.event);
    chain.accept(next);
  };
  const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  await add({
    type: "run_created",
    component: "RunContext",
    actor: "bench",
    data: { agent: "q" },
    trace_id: trace,
    span_id: "0000000000000001",
  });
  for (let i = 1; i < 999; i++) {
    const span = (i + 1).toString(16).padStart(16, "0");
    const reply = i % 10 === 0
      ? await writer.putPayload(new TextEncoder().encode(JSON.stringify({ text: `answer ${i}`, parts: [] })))
      : null;
    await add({
      type: reply ? "model_called" : "tool_called",
      component: "AgentBackend",
      actor: "bench",
      data: reply
        ? { model: "m", input_tokens: 10, output_tokens: 5, response_payload: reply }
        : { tool: "read_file" },
      trace_id: trace,
      span_id: span,
      parent_span_id: "0000000000000001",
      started_at: "2026-11-30T12:00:00.000000Z",
    });
  }
  await add({
    type: "run_completed",
    component: "RunContext",
    actor: "bench",
    data: { status: "completed" },
    trace_id: trace,
    span_id: "0000000000000001",
  });
  await writer.seal();
  const handle = viewerHandler(store, {
    policy: TelemetryPolicy.parse("version: 1\ndestinations:\n  browser: { kind: live, receives: bodies }\n"),
    port: PORT,
    token: TOKEN,
  });
  const viewer: number[] = [];
  const read: number[] = [];
  for (let i = 0; i < 21; i++) {
    let t = performance.now();
    // All 1,000 events on one page (the most a page holds), as before pages were cut.
    const view = await (await handle(request(`/api/runs/${runId}?limit=1000`))).json();
    viewer.push(performance.now() - t);
    if (view.events.length !== 1000 || !view.verdict.ok) throw new Error("the run page's data is not whole");
    t = performance.now();
    await verifyRun(await store.readRun(runId), { store });
    read.push(performance.now() - t);
  }
  report(
    "run page of 1,000 events: request to timeline data (vs its check alone, verifyRun)",
    median(viewer),
    median(read),
    "ms",
    "under 100 ms",
  );
}

async function manySpans(dir: string): Promise<void> {
  const runs = join(dir, "span-runs");
  const runId = await writeRun(runs, { tools: 20_000, runId: "run-20261130T120000Z-00020000" });
  const store = new FileStore({ runs });
  const handle = viewerHandler(store, {
    policy: TelemetryPolicy.parse("version: 1\ndestinations:\n  browser: { kind: live, receives: bodies }\n"),
    port: PORT,
    token: TOKEN,
  });
  const viewer: number[] = [];
  const check: number[] = [];
  let size = 0;
  for (let i = 0; i < 7; i++) {
    let t = performance.now();
    const body = await (await handle(request(`/api/runs/${runId}`))).text();
    viewer.push(performance.now() - t);
    size = body.length;
    const view = JSON.parse(body);
    if (view.summary.events !== 20_002 || !view.verdict.ok) {
      throw new Error("the 20,000-step run's page is not whole");
    }
    t = performance.now();
    await verifyRun(await store.readRun(runId), { store });
    check.push(performance.now() - t);
  }
  report(
    "run page of 20,000 steps (20,000 spans): request to its first page's data (vs its check alone, verifyRun)",
    median(viewer),
    median(check),
    "ms",
    "under 300 ms",
  );
  console.log(`  its page: ${(size / 1024).toFixed(0)} KiB of JSON for 20,002 events`);
}

/** The peak and the current resident memory of a process, in MB (Linux's /proc). */
async function memoryOf(pid: number): Promise<{ peak: number; now: number }> {
  // Through cat: Deno gives /proc only to a program with every permission.
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/status`], stdout: "piped" }).output();
  const status = new TextDecoder().decode(out.stdout);
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { peak: kb("VmHWM") / 1024, now: kb("VmRSS") / 1024 };
}

/** Fetches each address at once; the time of the slowest whole answer, and the bytes of the largest. */
async function atOnce(urls: string[]): Promise<{ slowest: number; bytes: number }> {
  const started = performance.now();
  const answers = await Promise.all(urls.map(async (url) => {
    const r = await fetch(url);
    const body = await r.text();
    if (r.status !== 200) throw new Error(`${url}: ${r.status} ${body}`);
    return { ms: performance.now() - started, bytes: body.length };
  }));
  return { slowest: Math.max(...answers.map((a) => a.ms)), bytes: Math.max(...answers.map((a) => a.bytes)) };
}

async function largePayloads(dir: string): Promise<void> {
  const runs = join(dir, "large-runs");
  const runId = await writeRun(runs, { answers: Array(5).fill(12_000_000) });
  const policy = join(dir, "bodies.yaml");
  await Deno.writeTextFile(
    policy,
    "version: 1\ndestinations:\n  browser: { kind: live, receives: bodies }\n",
  );
  const store = new FileStore({ runs });
  const checks: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    if (!(await verifyRun(await store.readRun(runId), { store })).ok) {
      throw new Error("the large run does not verify");
    }
    checks.push(performance.now() - t);
  }
  const ui = await proveUi(["--runs", runs, "ui", "--port", "0", "--policy", policy]);
  try {
    const idle = await memoryOf(ui.pid);
    const page = `${ui.url}api/runs/${runId}`;
    const same = await atOnce(Array.from({ length: 10 }, () => page));
    const afterSame = await memoryOf(ui.pid);
    const distinct = await atOnce(Array.from({ length: 10 }, (_, i) => `${page}?limit=${200 - i}`));
    const afterDistinct = await memoryOf(ui.pid);
    report(
      "run with five 12 MB answers, 10 requests for its page at once through prove ui: the slowest (vs its check alone, verifyRun)",
      same.slowest,
      median(checks),
      "ms",
      "each within 5,000 ms",
    );
    report(
      "the same run, 10 requests for 10 different pages of it at once: the slowest (vs verifyRun)",
      distinct.slowest,
      median(checks),
      "ms",
      "each within 5,000 ms",
    );
    report(
      "prove ui's peak memory (VmHWM) over both (vs the idle server's)",
      afterDistinct.peak,
      idle.now,
      "MB",
      "under 500 MB",
    );
    console.log(
      `  its page: ${(same.bytes / 1024).toFixed(0)} KiB of JSON for 180 MB of payloads; ` +
        `peak after the first 10: ${afterSame.peak.toFixed(0)} MB`,
    );
  } finally {
    await ui.stop();
  }
}
