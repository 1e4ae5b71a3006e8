/**
 * The sqlite store's speed.
 *
 * 1. Events appended per second through SqliteStore (row and line per event, WAL, synchronous NORMAL), as a
 *    ratio to bare `node:sqlite` autocommit inserts of the same rows in the same run. Target: at least 0.5.
 * 2. `runsReading(uri)` and `runsOfAgent(name)` on a store of 100,000 runs and 2,000,000 events (1,000
 *    agent classes of 100 runs, 2,000 inputs read by 50 runs each): median time. Target: under 10 ms each.
 *    The big store is built with bulk inserts in one transaction, into the real schema.
 * @module
 */
import { join } from "node:path";
import { EVENT_COLUMNS, eventRow } from "../../lib/provevi/store/store_rows.ts";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { median, report } from "./_report.ts";

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bench-sqlite-" });
  try {
    await appendRate(dir);
    await questions(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function appendRate(dir: string): Promise<void> {
  const N = 5_000;
  const storeRates: number[] = [];
  const rawRates: number[] = [];
  for (let round = 0; round < 5; round++) {
    const runId = `run-bench-${round}`;
    const chain = new EventChain(runId);
    const prepared = [];
    for (let i = 0; i < N; i++) {
      const next = chain.next({
        type: "tool_called",
        component: "AgentBackend",
        actor: "bench",
        refs: [`data+table://acme/demo/dev/in/${i % 10}`],
        data: { tool: "read_file", call_id: `c${i}`, text: "x".repeat(200) },
        trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
        span_id: "00f067aa0ba902b7",
      });
      chain.accept(next);
      prepared.push(next);
    }
    {
      await using store = new SqliteStore(join(dir, `store-${round}.db`), { runs: join(dir, "runs") });
      const writer = await store.openRun(runId);
      const t = performance.now();
      for (const { line, event } of prepared) await writer.append(line, event);
      storeRates.push(N / ((performance.now() - t) / 1000));
      await writer.seal();
    }
    {
      // The same rows into the same schema, one autocommit insert per row, no file.
      await using bare = new SqliteStore(join(dir, `bare-${round}.db`), { runs: join(dir, "bare-runs") });
      const db = bare.db;
      const insertEvent = db.prepare(
        `INSERT INTO provevi_events (${EVENT_COLUMNS.join(", ")}, line) VALUES (${
          EVENT_COLUMNS.map(() => "?").join(", ")
        }, ?)`,
      );
      const insertRef = db.prepare(
        "INSERT INTO provevi_event_refs (run_id, seq, n, uri) VALUES (?, ?, ?, ?)",
      );
      const t = performance.now();
      for (const { line, event } of prepared) {
        const row = eventRow(event, line);
        insertEvent.run(...EVENT_COLUMNS.map((c) => row[c]), line);
        event.refs.forEach((uri, n) => insertRef.run(event.run_id, event.seq, n, uri));
      }
      rawRates.push(N / ((performance.now() - t) / 1000));
    }
  }
  report(
    "SqliteStore append (row + line, WAL, synchronous NORMAL)",
    median(storeRates),
    median(rawRates),
    "events/s",
    ">= 0.5",
  );
}

async function questions(dir: string): Promise<void> {
  const RUNS = 100_000, EVENTS_PER_RUN = 20, AGENTS = 1_000, INPUTS = 2_000;
  const path = join(dir, "big.db");
  await using store = new SqliteStore(path, { runs: join(dir, "big-runs") });
  const db = store.db;
  const built = performance.now();
  db.exec("BEGIN");
  const run = db.prepare(
    `INSERT INTO provevi_runs (run_id, folder, org, domain, env, actor, mode, agent, agent_version, status,
       started_at, ended_at) VALUES (?, ?, 'acme', 'demo', 'dev', 'bench', 'strict', ?, ?, 'completed', ?, ?)`,
  );
  const agent = db.prepare(
    "INSERT INTO provevi_agents (agent, org, domain, env, name, first_run) VALUES (?, 'acme', 'demo', 'dev', ?, ?)",
  );
  const version = db.prepare(
    "INSERT INTO provevi_agent_versions (agent, version, backend, model, first_run) VALUES (?, ?, 'call', 'test:x', ?)",
  );
  const event = db.prepare(
    `INSERT INTO provevi_events (run_id, seq, time, type, component, actor, confidence, line)
     VALUES (?, ?, '2026-11-29T12:00:00.000000Z', ?, 'bench', 'bench', 'observed', ?)`,
  );
  const ref = db.prepare("INSERT INTO provevi_event_refs (run_id, seq, n, uri) VALUES (?, ?, 0, ?)");
  const versionOf = (a: number) => (a * 2654435761 % 2 ** 32).toString(16).padStart(64, "0");
  for (let a = 0; a < AGENTS; a++) {
    agent.run(`acme/demo/dev/agent-${a}`, `agent-${a}`, runIdOf(a));
    version.run(`acme/demo/dev/agent-${a}`, versionOf(a), runIdOf(a));
  }
  for (let r = 0; r < RUNS; r++) {
    const id = runIdOf(r);
    const a = r % AGENTS;
    run.run(
      id,
      `/runs/${id}`,
      `acme/demo/dev/agent-${a}`,
      versionOf(a),
      "2026-11-29T12:00:00Z",
      "2026-11-29T12:01:00Z",
    );
    for (let seq = 0; seq < EVENTS_PER_RUN; seq++) {
      const type = seq === 0 ? "run_created" : seq === 1 ? "input_staged" : "note_added";
      event.run(id, seq, type, `{"run_id":"${id}","seq":${seq}}`);
    }
    ref.run(id, 1, `data+table://acme/demo/dev/in/${r % INPUTS}?at=commit:${"c".repeat(40)}`);
  }
  db.exec("COMMIT");
  console.log(
    `  (built ${RUNS.toLocaleString("en-US")} runs, ${
      (RUNS * EVENTS_PER_RUN).toLocaleString("en-US")
    } events in ${((performance.now() - built) / 1000).toFixed(1)} s)`,
  );
  const time = async (fn: (i: number) => Promise<unknown[]>, expect: number) => {
    const times: number[] = [];
    for (let i = 0; i < 51; i++) {
      const t = performance.now();
      const rows = await fn(i);
      times.push(performance.now() - t);
      if (rows.length !== expect) throw new Error(`expected ${expect} rows, got ${rows.length}`);
    }
    return median(times);
  };
  const reading = await time(
    (i) => store.runsReading(`data+table://acme/demo/dev/in/${(i * 37) % INPUTS}`),
    50,
  );
  report(
    "runsReading(uri) on 100,000 runs / 2,000,000 events (50 runs per URI)",
    reading,
    10,
    "ms",
    "< 1.0 of 10 ms",
  );
  const byAgent = await time((i) => store.runsOfAgent(`agent-${(i * 13) % AGENTS}`), 100);
  report(
    "runsOfAgent(name) on 100,000 runs / 2,000,000 events (100 runs per class)",
    byAgent,
    10,
    "ms",
    "< 1.0 of 10 ms",
  );
}

function runIdOf(r: number): string {
  return `run-20261129T120000Z-${r.toString(16).padStart(8, "0")}`;
}

if (import.meta.main) await main();
