/**
 * The postgres store's speed, against the server that PROVEVI_TEST_PG_URL names (`.ci/peers/postgres.sh`
 * starts one); each part makes its own database and drops it after.
 *
 * 1. Events appended per second through PostgresStore (line in events.jsonl, then the event's rows in one
 *    statement), as a ratio to bare `npm:postgres` autocommit inserts of the same rows (each event row and its
 *    URIs) in the same run. Target: at least 0.5.
 * 2. `runsReading(uri)`, `runsOfAgent(name)` and `runsOfExperiment(uri)` on a store of 100,000 runs and
 *    2,000,000 events (1,000 agent classes of 100 runs, 2,000 inputs read by 50 runs each, 100 experiments of
 *    1,000 runs): median time, as a ratio to the same SQL with the same parameters through a bare
 *    `npm:postgres` pool (prepared), in the same run; and, for reading the figures, the server's own time for
 *    that SQL (EXPLAIN ANALYZE's execution time). Target: under 10 ms each. The big store is built by the
 *    server itself (`INSERT … SELECT … generate_series`) into the real schema.
 * @module
 */
import { join } from "node:path";
import { EVENT_COLUMNS, eventRow } from "../../lib/provevi/store/store_rows.ts";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { PostgresStore } from "../../lib/provevi/postgres/postgres_store.ts";
import postgres from "postgres";
import { freshDatabase, PG_URL } from "../provevi/postgres/_pg.ts";
import { median, report } from "./_report.ts";

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  if (PG_URL === null) {
    console.log(
      "postgres: skipped, no PostgreSQL server (source .ci/peers/postgres.sh; it sets PROVEVI_TEST_PG_URL)",
    );
    return;
  }
  const dir = await Deno.makeTempDir({ prefix: "bench-postgres-" });
  try {
    await appendRate(dir);
    await questions(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function appendRate(dir: string): Promise<void> {
  const N = 2_000;
  const storeRates: number[] = [];
  const rawRates: number[] = [];
  const db = await freshDatabase();
  try {
    await using store = await PostgresStore.open(db.uri, { runs: join(dir, "runs") });
    for (let round = 0; round < 5; round++) {
      const runId = `run-bench-${round}`;
      const chain = new EventChain(runId);
      const prepared = [];
      for (let i = 0; i < N; i++) {
        const next = chain.next({
          type: i === 0 ? "run_created" : "tool_called",
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
        const writer = await store.openRun(runId);
        await writer.append(prepared[0]!.line, prepared[0]!.event);
        const t = performance.now();
        for (const { line, event } of prepared.slice(1)) await writer.append(line, event);
        storeRates.push((N - 1) / ((performance.now() - t) / 1000));
        await writer.seal();
      }
      {
        // The same rows into the same tables, one autocommit insert per row, prepared, no file.
        const sql = store.sql;
        const bareId = `run-bare-${round}`;
        const insertEvent = `INSERT INTO provevi_events (${EVENT_COLUMNS.join(", ")}, line) VALUES (${
          EVENT_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")
        }, $${EVENT_COLUMNS.length + 1})`;
        const insertRef = "INSERT INTO provevi_event_refs (run_id, seq, n, uri) VALUES ($1, $2, $3, $4)";
        const t = performance.now();
        for (const { line, event } of prepared.slice(1)) {
          const row = eventRow({ ...event, run_id: bareId }, line);
          await sql.unsafe(insertEvent, [...EVENT_COLUMNS.map((c) => row[c]), line], { prepare: true });
          for (const [n, uri] of event.refs.entries()) {
            await sql.unsafe(insertRef, [bareId, event.seq, n, uri], { prepare: true });
          }
        }
        rawRates.push((N - 1) / ((performance.now() - t) / 1000));
      }
    }
  } finally {
    await db.drop();
  }
  report(
    "PostgresStore append (line + rows in one statement)",
    median(storeRates),
    median(rawRates),
    "events/s",
    ">= 0.5",
  );
}

async function questions(dir: string): Promise<void> {
  const db = await freshDatabase();
  try {
    await using store = await PostgresStore.open(db.uri, { runs: join(dir, "big-runs") });
    const sql = store.sql;
    const built = performance.now();
    const id = (x: string) => `'run-20261129T120000Z-' || lpad(to_hex(${x}), 8, '0')`;
    const version = (x: string) => `lpad(to_hex((${x}::bigint * 2654435761) % 4294967296), 64, '0')`;
    await sql.unsafe(`
      INSERT INTO provevi_agents (agent, org, domain, env, name, first_run)
        SELECT 'acme/demo/dev/agent-' || a, 'acme', 'demo', 'dev', 'agent-' || a, ${id("a")}
        FROM generate_series(0, 999) a;
      INSERT INTO provevi_agent_versions (agent, version, backend, model, first_run)
        SELECT 'acme/demo/dev/agent-' || a, ${version("a")}, 'call', 'test:x', ${id("a")}
        FROM generate_series(0, 999) a;
      INSERT INTO provevi_experiments (experiment, first_run)
        SELECT 'experiment://acme/demo/dev/exp-' || x, ${id("x")} FROM generate_series(0, 99) x;
      INSERT INTO provevi_runs (run_id, folder, org, domain, env, actor, mode, agent, agent_version, experiment,
          status, started_at, ended_at)
        SELECT ${id("r")}, '/runs/' || ${id("r")}, 'acme', 'demo', 'dev', 'bench', 'strict',
          'acme/demo/dev/agent-' || (r % 1000), ${
      version("r % 1000")
    }, 'experiment://acme/demo/dev/exp-' || (r % 100),
          'completed', '2026-11-29T12:00:00Z', '2026-11-29T12:01:00Z'
        FROM generate_series(0, 99999) r;
      INSERT INTO provevi_events (run_id, seq, time, type, component, actor, confidence, line)
        SELECT ${id("r")}, s, '2026-11-29T12:00:00.000000Z',
          CASE s WHEN 0 THEN 'run_created' WHEN 1 THEN 'input_staged' ELSE 'note_added' END,
          'bench', 'bench', 'observed', '{"run_id":"' || ${id("r")} || '","seq":' || s || '}'
        FROM generate_series(0, 99999) r, generate_series(0, 19) s;
      INSERT INTO provevi_event_refs (run_id, seq, n, uri)
        SELECT ${id("r")}, 1, 0, 'data+table://acme/demo/dev/in/' || (r % 2000) || '?at=commit:${
      "c".repeat(40)
    }'
        FROM generate_series(0, 99999) r;
    `);
    // VACUUM (ANALYZE), as autovacuum would have run on a team's database long before 100,000 runs: it sets
    // the visibility map, so the questions' index-only scans need not visit the heap, and gives the planner
    // its statistics. It cannot run inside the multi-statement block above (an implicit transaction).
    await sql.unsafe("VACUUM (ANALYZE)");
    console.log(
      `  (built 100,000 runs, 2,000,000 events in ${((performance.now() - built) / 1000).toFixed(1)} s)`,
    );
    const trip: number[] = [];
    for (let i = 0; i < 51; i++) {
      const t = performance.now();
      await sql.unsafe("SELECT 1", [], { prepare: true });
      trip.push(performance.now() - t);
    }
    // The machine's own latency, for reading the figures: each question is one or two round trips.
    console.log(`  (a round trip to the server, SELECT 1: ${median(trip).toFixed(2)} ms)`);
    // The questions' SQL as postgres_questions.ts writes it, for the bare driver and the server alone.
    const SUMMARY =
      "r.run_id, r.agent, r.agent_version, r.experiment, r.experiment_pin, r.status, r.started_at, r.ended_at";
    const READING = `SELECT ${SUMMARY}, f.uri AS uri
       FROM provevi_event_refs f
       JOIN provevi_events e ON e.run_id = f.run_id AND e.seq = f.seq
       JOIN provevi_runs r ON r.run_id = f.run_id
       WHERE (f.uri = $1 OR (f.uri >= $2 AND f.uri < $3)) AND e.type = 'input_staged'
       ORDER BY r.run_id, e.seq`;
    const OF_AGENT = `SELECT ${SUMMARY} FROM provevi_runs r
         WHERE r.agent IN (SELECT agent FROM provevi_agents WHERE name = $1)
         ORDER BY r.run_id`;
    const OF_EXPERIMENT = `SELECT ${SUMMARY} FROM provevi_runs r WHERE r.experiment IN ($1)
       ORDER BY r.run_id`;
    const EXPERIMENT_NAMED = "SELECT experiment FROM provevi_experiments WHERE experiment = $1";
    const bare = postgres(db.uri, { max: 1, prepare: true, fetch_types: false, onnotice: () => {} });
    try {
      // Each question: its name, the store's call, and the statements it makes (SQL and parameters), in order.
      type Statements = (i: number) => [string, string[]][];
      const questions: [string, (i: number) => Promise<unknown[]>, Statements, number][] = [
        [
          "runsReading(uri) on 100,000 runs / 2,000,000 events (50 runs per URI)",
          (i) => store.runsReading(`data+table://acme/demo/dev/in/${(i * 37) % 2000}`),
          (i) => {
            const uri = `data+table://acme/demo/dev/in/${(i * 37) % 2000}`;
            return [[READING, [uri, `${uri}?`, `${uri}@`]]];
          },
          50,
        ],
        [
          "runsOfAgent(name) on 100,000 runs / 2,000,000 events (100 runs per class)",
          (i) => store.runsOfAgent(`agent-${(i * 13) % 1000}`),
          (i) => [[OF_AGENT, [`agent-${(i * 13) % 1000}`]]],
          100,
        ],
        [
          "runsOfExperiment(uri) on 100,000 runs / 2,000,000 events (1,000 runs per experiment)",
          (i) => store.runsOfExperiment(`experiment://acme/demo/dev/exp-${(i * 7) % 100}`),
          (i) => {
            const uri = `experiment://acme/demo/dev/exp-${(i * 7) % 100}`;
            return [[EXPERIMENT_NAMED, [uri]], [OF_EXPERIMENT, [uri]]];
          },
          1000,
        ],
      ];
      for (const [name, ask, statements, expect] of questions) {
        // The store and the bare driver take turns on each parameter, so that neither finds the pages the
        // other read in the cache when it did not.
        const bareAsk = async (i: number) => {
          let rows: unknown[] = [];
          for (const [text, params] of statements(i)) {
            rows = [...await bare.unsafe(text, params, { prepare: true })];
          }
          return rows;
        };
        const both: [number[], number[]] = [[], []];
        for (let i = 0; i < 51; i++) {
          for (
            const [k, fn] of (i % 2 ? [[0, ask], [1, bareAsk]] : [[1, bareAsk], [0, ask]]) as [
              0 | 1,
              typeof ask,
            ][]
          ) {
            const t = performance.now();
            const rows = await fn(i);
            both[k].push(performance.now() - t);
            if (rows.length !== expect) throw new Error(`expected ${expect} rows, got ${rows.length}`);
          }
        }
        const [figure, direct] = both.map(median) as [number, number];
        // The server's own time for the same statements: planning and execution, as EXPLAIN ANALYZE reports.
        const server: number[] = [];
        for (let i = 0; i < 21; i++) {
          let ms = 0;
          for (const [text, params] of statements(i)) {
            const plan = (await bare.unsafe(`EXPLAIN (ANALYZE, TIMING OFF, SUMMARY) ${text}`, params))
              .map((r) => String(r["QUERY PLAN"]));
            for (const line of plan.filter((l) => /^(Planning|Execution) Time/.test(l))) {
              ms += Number(/([\d.]+) ms/.exec(line)?.[1] ?? NaN);
            }
          }
          server.push(ms);
        }
        console.log(`  (the server alone, planning and execution: ${median(server).toFixed(2)} ms)`);
        report(name, figure, direct, "ms", "under 10 ms; ratio to the same SQL through bare npm:postgres");
      }
    } finally {
      await bare.end();
    }
  } finally {
    await db.drop();
  }
}

if (import.meta.main) await main();
