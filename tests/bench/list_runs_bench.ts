/**
 * `listRuns()` (the table of `prove runs`) on a sqlite store of 100,000 runs and 1,000,000 events: the newest
 * page of 50, a page of one status, of one agent class, of runs since a time, and `resolveRunRef("latest")`,
 * median time of each. Target: under 50 ms each (the reference is that figure). The store is built with bulk
 * inserts in one transaction, into the real schema; each run has a `run_created` line with its model and
 * writer, model calls with tokens, and an ending (1 in 20 failed, 1 in 100 cancelled, the last 10 running).
 * @module
 */
import { join } from "node:path";
import { listRuns } from "../../lib/provevi/runs/list_runs.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { resolveRunRef } from "../../lib/provevi/runs/resolve_run_ref.ts";
import { writerProcess } from "../../lib/provevi/evidence/writer_process.ts";
import { median, report } from "./_report.ts";

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bench-list-runs-" });
  try {
    await bench(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const RUNS = 100_000, EVENTS_PER_RUN = 10, AGENTS = 1_000;

function timeOf(r: number): string {
  return new Date(Date.UTC(2026, 0, 1) + r * 60_000).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

async function bench(dir: string): Promise<void> {
  await using store = new SqliteStore(join(dir, "big.db"), { runs: join(dir, "runs") });
  const db = store.db;
  const built = performance.now();
  const writer = JSON.stringify(writerProcess());
  db.exec("BEGIN");
  const run = db.prepare(
    // an ended run is sealed, as a writer leaves it (sealed_at is its end): a row ended but never sealed is a
    // writer killed at its seal, which listRuns looks into
    `INSERT INTO provevi_runs (run_id, folder, org, domain, env, actor, mode, agent, agent_version, status,
       started_at, ended_at, sealed_at) VALUES (?, ?, 'acme', 'demo', 'dev', 'bench', 'strict', ?, ?, ?, ?, ?, ?7)`,
  );
  const event = db.prepare(
    `INSERT INTO provevi_events (run_id, seq, time, type, component, actor, confidence, line)
     VALUES (?, ?, ?, ?, 'bench', 'bench', 'observed', ?)`,
  );
  // The agent classes, as the writer records them: a filter by a bare name finds its class here.
  const agentRow = db.prepare(
    "INSERT INTO provevi_agents (agent, org, domain, env, name, first_run) VALUES (?, 'acme', 'demo', 'dev', ?, ?)",
  );
  for (let a = 0; a < AGENTS; a++) agentRow.run(`acme/demo/dev/agent-${a}`, `agent-${a}`, `run-first-${a}`);
  for (let r = 0; r < RUNS; r++) {
    const id = `run-${timeOf(r).replace(/[-:]/g, "").slice(0, 15)}Z-${r.toString(16).padStart(8, "0")}`;
    const running = r >= RUNS - 10;
    const ending = running
      ? null
      : r % 100 === 7
      ? "CancelledError"
      : r % 20 === 3
      ? "ValueError"
      : "completed";
    const status = ending === null ? "running" : ending === "completed" ? "completed" : "failed";
    const agent = `acme/demo/dev/agent-${r % AGENTS}`;
    run.run(
      id,
      `/runs/${id}`,
      agent,
      "f".repeat(64),
      status,
      timeOf(r),
      ending === null ? null : timeOf(r + 1),
    );
    for (let seq = 0; seq < EVENTS_PER_RUN; seq++) {
      const last = seq === EVENTS_PER_RUN - 1;
      const type = seq === 0
        ? "run_created"
        : last && ending === "completed"
        ? "run_completed"
        : last && ending !== null
        ? "run_failed"
        : seq % 2
        ? "model_called"
        : "tool_called";
      const data = type === "run_created"
        ? `{"agent":"agent-${r % AGENTS}","model":"test:m","writer":${writer}}`
        : type === "model_called"
        ? `{"input_tokens":100,"output_tokens":20}`
        : type === "run_failed"
        ? `{"error":"${ending}","message":"x"}`
        : "{}";
      event.run(id, seq, timeOf(r), type, `{"data":${data},"run_id":"${id}","seq":${seq},"type":"${type}"}`);
    }
  }
  db.exec("COMMIT");
  console.log(
    `  (built ${RUNS.toLocaleString("en-US")} runs, ${
      (RUNS * EVENTS_PER_RUN).toLocaleString("en-US")
    } events in ${((performance.now() - built) / 1000).toFixed(1)} s)`,
  );
  const time = async (fn: (i: number) => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < 21; i++) {
      const t = performance.now();
      await fn(i);
      times.push(performance.now() - t);
    }
    return median(times);
  };
  const cases: [string, (i: number) => Promise<unknown>][] = [
    ["the newest 50", () => listRuns(store, { limit: 50 })],
    ["page 100 of 50", () => listRuns(store, { limit: 50, offset: 5_000 })],
    ["--status failed, 50", () => listRuns(store, { status: "failed", limit: 50 })],
    ["--status cancelled, 50", () => listRuns(store, { status: "cancelled", limit: 50 })],
    ["--status running, 50", () => listRuns(store, { status: "running", limit: 50 })],
    ["--agent NAME, 50", async (i) => {
      const list = await listRuns(store, { agent: `agent-${(i * 13) % AGENTS}`, limit: 50 });
      if (list.runs.length !== 50) throw new Error(`the agent's page has ${list.runs.length} runs, not 50`);
      return list;
    }],
    ["--since (the last 1,000 runs), 50", () => listRuns(store, { since: timeOf(RUNS - 1_000), limit: 50 })],
    ["resolveRunRef(latest)", () => resolveRunRef(store, "latest")],
  ];
  for (const [name, fn] of cases) {
    report(
      `listRuns() ${name} on 100,000 runs / 1,000,000 events`,
      await time(fn),
      50,
      "ms",
      "< 1.0 of 50 ms",
    );
  }
}

if (import.meta.main) await main();
