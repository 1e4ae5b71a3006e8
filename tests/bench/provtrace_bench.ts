/**
 * provtrace's speed.
 *
 * 1. Build 1,000 sealed runs of 20 model and tool steps each (10 model calls, 10 tool calls) from a sqlite
 *    store: runs per second, and rows per second as a ratio to bare `node:sqlite` inserts of the same rows
 *    (one prepared statement per table, one transaction per run) in the same run. Target: at least 0.3, since
 *    each run is verified first. A build of this size prepares its runs (read, verified, the store's rows
 *    checked against the run's files, mapped to rows) on a worker while the main thread writes the runs before
 *    them, so the machine's two cores share it. Where the time goes (CPU profiles of this build, December 2026,
 *    quiet): the worker is the slower side, some 3.3 ms a run: the store's rows checked 30% (their reading 25%:
 *    a run's first 256 rows of a table read at once, the rest as they come), the verification 20% (events.jsonl
 *    parsed, each line checked in RFC 8785 form and hashed, the pack's records hashed, the manifest), the rows
 *    made 8%, the run sent to the main thread 4%; the main thread, some 2 ms a run: the inserts (node:sqlite's
 *    `run`, where the reference spends nearly all its time) 55%, the run's rows read back for their digest 18%,
 *    savepoints and commits 16%, the run received 6%. On one thread (before issue 33's last pass) the build took
 *    4.8-5.8 ms a run, a ratio of 0.26-0.28; the same run of the bench on two threads, 0.46-0.51, and 0.37-0.40
 *    under `--load`. Before issue 33's first pass the row check parsed and checked events.jsonl a second time,
 *    prepared a dozen queries per run, found a pack's records with four calls each, a few checks looked at files
 *    through an asynchronous call each (~80 µs of CPU against ~6 µs), and RFC 8785 text was made by the
 *    `canonicalize` package or a copy of the whole value: the part outside the inserts took ~12 ms a run.
 * 2. The spec's first question ("every call to tool X whose arguments held Y, and the step after it") on a
 *    database of 100,000 tool calls: median time in this process (`timeout: 0`). Target: under 50 ms. And the
 *    same question as `provtrace query` asks it, in a Deno process of its own that a time limit can stop, as a
 *    ratio to the first (the cost of the limit: starting that process).
 * 3. Export model calls (runs of 10) in each format, as `provtrace export --out` does: each run checked against
 *    its store first (with the user's rows key, as the CLI does: the store's last hash and manifest, the chain of
 *    its lines, and the MAC of the run's rows), every line with its provenance, the manifest beside the file and
 *    in the database. Reference: the same lines without provenance, made from the same rows and written to a
 *    file, with no check and no manifest (what an exporter without provenance does). Target: at least 0.5, on
 *    100,000 calls (`PROVTRACE_BENCH_EXPORT_RUNS=10000`); by default 1,000 runs (10,000 calls). Each format's
 *    export and reference are measured 3 times (`PROVTRACE_BENCH_EXPORT_REPEATS`), in alternating order, and
 *    their medians compared. Without the key (or with `check --deep`) each run is built again from its
 *    evidence, about 80 ms a run on a loaded machine.
 * @module
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import type { Json } from "../../lib/provevi/evidence/event.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { buildTrace } from "../../lib/provtrace/build/build.ts";
import { queryTrace } from "../../lib/provtrace/db/query.ts";
import { writeTraceExport } from "../../lib/provtrace/export/export_file.ts";
import { TRACE_EXPORT_FORMATS, type TraceExportFormat } from "../../lib/provtrace/export/formats.ts";
import { openTraceDb } from "../../lib/provtrace/db/trace_db.ts";
import { loadCalls } from "../../lib/provtrace/export/_calls.ts";
import { hfLine, openaiLine, sharegptLine } from "../../lib/provtrace/export/formats.ts";
import { atifTrajectory } from "../../lib/provtrace/export/atif.ts";
import { chatMessages, sftMessages } from "../../lib/provtrace/export/_messages.ts";
import { median, report } from "./_report.ts";

const RUNS = 1_000;
const STEPS = 10; // model calls; each is followed by one tool call

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bench-provtrace-" });
  try {
    await buildRate(dir);
    await questionTime(dir);
    await exportRate(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function writeRuns(dir: string, runs = RUNS): Promise<string> {
  const path = join(dir, "evidence.db");
  await using store = new SqliteStore(path, { runs: join(dir, "runs") });
  const enc = new TextEncoder();
  for (let r = 0; r < runs; r++) {
    const runId = `run-20261130T000000Z-${r.toString(16).padStart(8, "0")}`;
    const writer = await store.openRun(runId);
    const chain = new EventChain(runId);
    const trace = r.toString(16).padStart(32, "0");
    let span = 1;
    const sid = () => (span++).toString(16).padStart(16, "0");
    const root = sid();
    const add = async (type: string, data: Record<string, Json>, payload: string | null, id = sid()) => {
      const next = chain.next({
        type,
        component: "AgentBackend",
        actor: "bench",
        data,
        payload,
        trace_id: trace,
        span_id: id,
        parent_span_id: id === root ? null : root,
        started_at: type === "run_created" || type === "run_completed" ? null : "2026-11-30T00:00:00.000000Z",
      });
      await writer.append(next.line, next.event);
      chain.accept(next);
    };
    const put = (value: Json) => writer.putPayload(enc.encode(JSON.stringify(value)));
    await add(
      "run_created",
      { agent: "bench-agent", backend: "agent", model: "test:", org: "acme", domain: "demo", env: "dev" },
      null,
      root,
    );
    const prompt: Json[] = [{ role: "user", content: [{ type: "text", text: `Question ${r}: what grew?` }] }];
    for (let s = 0; s < STEPS; s++) {
      const callId = `c${s}`;
      const args = { path: `/input/file-${s}.csv`, pattern: `Q${s % 4}` };
      const request = await put({
        params: {
          prompt: [...prompt],
          tools: [{ type: "function", name: "grep_file", inputSchema: { type: "object" } }],
        },
      });
      const reply = {
        content: [{
          type: "tool-call",
          toolCallId: callId,
          toolName: "grep_file",
          input: JSON.stringify(args),
        }],
      };
      await add("model_called", {
        provider: "test",
        model: "bench",
        answered_by: "bench-1",
        input_tokens: 100 + s * 40,
        output_tokens: 12,
        finish_reason: "tool-calls",
        streamed: false,
        tool_calls: [{ id: callId, name: "grep_file" }],
        response_payload: await put(reply),
      }, request);
      const result = [{ line: s + 1, text: `Q${s % 4},${40 + s}.0` }];
      await add("tool_called", {
        tool: "grep_file",
        call_id: callId,
        error: null,
        executed_by: "sandbox",
        sandboxed: true,
        result_payload: await put(result),
      }, await put(args));
      prompt.push({
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: callId, toolName: "grep_file", input: args }],
      });
      prompt.push({
        role: "tool",
        content: [{
          type: "tool-result",
          toolCallId: callId,
          toolName: "grep_file",
          output: { type: "json", value: result },
        }],
      });
    }
    await add("run_completed", { status: "completed" }, null, root);
    await writer.seal();
  }
  return path;
}

async function buildRate(dir: string): Promise<void> {
  const evidence = await writeRuns(dir);
  const db = join(dir, "trace.db");
  const t = performance.now();
  const built = await buildTrace({ store: `sqlite:///${evidence}`, runs: join(dir, "runs"), db });
  const seconds = (performance.now() - t) / 1000;
  if (built.added.length !== RUNS) {
    throw new Error(`built ${built.added.length} runs, refused ${built.refused.length}`);
  }
  const rows = built.added.reduce((n, r) => n + r.rows, 0);

  // The same rows, bare: read back from the built file, inserted into a fresh file of the same schema.
  const source = new DatabaseSync(db, { readOnly: true });
  const tables = (source.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'trace\\_%' ESCAPE '\\' AND name <> 'trace_meta'",
  ).all() as { name: string }[]).map((r) => r.name);
  const byRun = new Map<string, { table: string; values: unknown[] }[]>();
  let messages: unknown[][] = [];
  for (const table of tables) {
    const all = source.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
    if (table === "trace_messages") {
      messages = all.map((r) => Object.values(r));
      continue;
    }
    for (const row of all) {
      const list = byRun.get(String(row.run_id)) ?? [];
      list.push({ table, values: Object.values(row) });
      byRun.set(String(row.run_id), list);
    }
  }
  source.close();
  const bareRows = [...byRun.values()].reduce((n, l) => n + l.length, 0) + messages.length;
  using bare = openTraceDb(join(dir, "bare.db"), { write: true });
  const statements = new Map(tables.map((table) => {
    const n =
      (bare.db.prepare(`SELECT count(*) AS n FROM pragma_table_info('${table}')`).get() as { n: number }).n;
    const verb = table === "trace_messages" ? "INSERT OR IGNORE" : "INSERT";
    return [table, bare.db.prepare(`${verb} INTO ${table} VALUES (${Array(n).fill("?").join(", ")})`)];
  }));
  const perRun = Math.ceil(messages.length / byRun.size);
  const t2 = performance.now();
  let m = 0;
  for (const list of byRun.values()) {
    bare.db.exec("BEGIN IMMEDIATE");
    for (const { table, values } of list) statements.get(table)!.run(...(values as never[]));
    for (const values of messages.slice(m, m + perRun)) {
      statements.get("trace_messages")!.run(...(values as never[]));
    }
    m += perRun;
    bare.db.exec("COMMIT");
  }
  const bareSeconds = (performance.now() - t2) / 1000;
  console.log(
    `provtrace build: ${RUNS} runs of ${2 * STEPS} steps in ${seconds.toFixed(1)} s: ${
      (RUNS / seconds).toFixed(1)
    } runs/s, ${rows} rows`,
  );
  if (rows !== bareRows) throw new Error(`the build wrote ${rows} rows, but the file holds ${bareRows}`);
  report(
    "provtrace build rows/s vs bare node:sqlite inserts",
    rows / seconds,
    bareRows / bareSeconds,
    "rows/s",
    ">= 0.3",
  );
}

async function questionTime(dir: string): Promise<void> {
  const path = join(dir, "question.db");
  using trace = openTraceDb(path, { write: true });
  const db = trace.db;
  const CALLS = 100_000;
  const PER_RUN = 20;
  db.exec("BEGIN");
  const span = db.prepare(
    "INSERT INTO trace_spans (run_id, span_id, seq, kind, name, timed, status, origin, attributes) VALUES (?, ?, ?, ?, ?, 1, 'OK', 'evidence', '{}')",
  );
  const call = db.prepare(
    "INSERT INTO trace_tool_calls (run_id, call_id, span_id, seq, tool, arguments, result, deferred, provider_run, output_tool) VALUES (?, ?, ?, ?, ?, ?, '[]', 0, 0, 0)",
  );
  const tools = [
    "read_file",
    "grep_file",
    "list_files",
    "write_file",
    "note",
    "web_search",
    "fetch",
    "sql",
    "plot",
    "ask",
  ];
  for (let i = 0; i < CALLS; i++) {
    const run = `run-${Math.floor(i / PER_RUN)}`;
    const seq = (i % PER_RUN) * 2 + 1;
    span.run(run, `m${seq}`, seq, "LLM", "chat bench");
    span.run(run, `t${seq + 1}`, seq + 1, "TOOL", "execute_tool");
    call.run(
      run,
      `c${i}`,
      `t${seq + 1}`,
      seq + 1,
      tools[i % tools.length]!,
      JSON.stringify({ path: `/input/file-${i % 997}.csv` }),
    );
  }
  db.exec("COMMIT");
  db.exec("ANALYZE");
  const sql = `
    SELECT t.run_id, s.seq, t.tool, t.arguments, t.result,
      (SELECT n.seq || ' ' || n.name FROM trace_spans n
        WHERE n.run_id = t.run_id AND n.seq > s.seq AND n.kind IN ('LLM', 'TOOL') ORDER BY n.seq LIMIT 1) AS next_step
    FROM trace_tool_calls t JOIN trace_spans s ON s.run_id = t.run_id AND s.span_id = t.span_id
    WHERE t.tool = 'grep_file' AND t.arguments LIKE '%file-42.csv%'`;
  const median15 = async (options: { timeout?: number }) => {
    const times: number[] = [];
    let found = 0;
    for (let i = 0; i < 15; i++) {
      const t = performance.now();
      found = (await queryTrace(path, sql, options)).rows.length;
      times.push(performance.now() - t);
    }
    return { found, ms: median(times) };
  };
  const here = await median15({ timeout: 0 });
  const limited = await median15({});
  console.log(
    `provtrace question on ${CALLS.toLocaleString("en-US")} tool calls: ${here.found} rows; median ${
      here.ms.toFixed(1)
    } ms (target under 50 ms)`,
  );
  report(
    "provtrace query with its time limit (its own process) vs the same question in this process",
    limited.ms,
    here.ms,
    "ms",
    "a process start, some tens of ms",
  );
}

const EXPORT_RUNS = Number(Deno.env.get("PROVTRACE_BENCH_EXPORT_RUNS") ?? 1_000);
/** How many times each format's export and its reference are measured, in alternating order. */
const EXPORT_REPEATS = Number(Deno.env.get("PROVTRACE_BENCH_EXPORT_REPEATS") ?? 3);

async function exportRate(dir: string): Promise<void> {
  const folder = join(dir, "export");
  await Deno.mkdir(folder);
  const evidence = await writeRuns(folder, EXPORT_RUNS);
  const db = join(folder, "trace.db");
  const keyFile = join(folder, "rows.key");
  const built = await buildTrace({ store: `sqlite:///${evidence}`, runs: join(folder, "runs"), db, keyFile });
  if (built.added.length !== EXPORT_RUNS) {
    throw new Error(`built ${built.added.length} of ${EXPORT_RUNS} runs`);
  }
  for (const format of TRACE_EXPORT_FORMATS) {
    const out = join(folder, `${format}.jsonl`);
    const exportOnce = async () => {
      const t = performance.now();
      const written = await writeTraceExport(db, {
        kind: format,
        out,
        stores: [`sqlite:///${evidence}`],
        runs: join(folder, "runs"),
        keyFile,
      });
      return { seconds: (performance.now() - t) / 1000, lines: written.manifest.lines };
    };
    const bareOnce = async () => {
      const t = performance.now();
      const bytes = await writeBare(db, format, join(folder, `${format}-bare.jsonl`));
      return { seconds: (performance.now() - t) / 1000, bytes };
    };
    // Alternating repeats, in turn first and second, and the median of each: neither side always runs on the
    // code the other warmed up, or in the garbage the other left.
    const exports: number[] = [], bares: number[] = [];
    let lines = 0, bytes = 0;
    for (let i = 0; i < EXPORT_REPEATS; i++) {
      if (i % 2 === 0) {
        const e = await exportOnce();
        const b = await bareOnce();
        exports.push(e.seconds), bares.push(b.seconds), lines = e.lines, bytes = b.bytes;
      } else {
        const b = await bareOnce();
        const e = await exportOnce();
        exports.push(e.seconds), bares.push(b.seconds), lines = e.lines, bytes = b.bytes;
      }
    }
    const seconds = median(exports), bareSeconds = median(bares);
    const size = (await Deno.stat(out)).size;
    console.log(
      `provtrace export --format ${format}: ${lines.toLocaleString("en-US")} lines (${
        (size / 1e6).toFixed(0)
      } MB with provenance, ${(bytes / 1e6).toFixed(0)} MB without) in ${
        seconds.toFixed(1)
      } s (median of ${EXPORT_REPEATS})`,
    );
    report(
      `provtrace export ${format} of ${
        (EXPORT_RUNS * STEPS).toLocaleString("en-US")
      } model calls vs the same lines without provenance`,
      1 / seconds,
      1 / bareSeconds,
      "exports/s",
      ">= 0.5",
    );
  }
  // Without the key each run is built again from its evidence (what check --deep does): the figure beside it.
  const out = join(folder, "steps-deep.jsonl");
  let t = performance.now();
  await writeTraceExport(db, {
    kind: "steps",
    out,
    stores: [`sqlite:///${evidence}`],
    runs: join(folder, "runs"),
  });
  const deep = (performance.now() - t) / 1000;
  t = performance.now();
  await writeBare(db, "steps", join(folder, "steps-bare-2.jsonl"));
  report(
    "provtrace export steps without the rows key (each run built again, as check --deep) vs the same lines without provenance",
    1 / deep,
    1 / ((performance.now() - t) / 1000),
    "exports/s",
    "none: the key's export is the one with the target",
  );
}

/** The format's lines from the same rows, without provenance, no check and no manifest: the reference. */
async function writeBare(db: string, format: TraceExportFormat, out: string): Promise<number> {
  using trace = openTraceDb(db);
  const rows = trace.db.prepare(`
    SELECT c.run_id, c.span_id, s.seq, s.line_hash, s.end_time, c.model, c.answered_by, c.provider,
      c.message_format, c.input_tokens, c.output_tokens, c.cache_read_input_tokens, c.finish_reason, c.tools,
      c.error
    FROM trace_model_calls c JOIN trace_spans s ON s.run_id = c.run_id AND s.span_id = c.span_id
      JOIN trace_runs r ON r.run_id = c.run_id
    ORDER BY r.started_at, c.run_id, s.seq`).all() as Record<string, string | number | null>[];
  const calls = loadCalls(trace.db, rows);
  const lines: unknown[] = [];
  if (format === "atif") {
    const byRun = new Map<string, typeof calls>();
    for (const c of calls) byRun.set(c.run_id, [...(byRun.get(c.run_id) ?? []), c]);
    for (const [runId, list] of byRun) {
      lines.push(atifTrajectory({
        run_id: runId,
        agent: "bench-agent",
        agent_version: null,
        model: "test:",
        session_id: null,
        parent_run: null,
      }, list.map((call) => ({ call, turn: null }))));
    }
  } else {
    for (const c of calls) {
      lines.push(
        format === "openai"
          ? openaiLine(c, false)
          : format === "sharegpt"
          ? sharegptLine(c)
          : format === "hf"
          ? hfLine(c)
          : format === "sft"
          ? { messages: sftMessages(chatMessages(c.sent, c.received)), tools: c.tools }
          : { run_id: c.run_id, seq: c.seq, state: c.sent.flat(), action: c.received, result: c.results },
      );
    }
  }
  const encoder = new TextEncoder();
  using file = await Deno.open(out, { write: true, create: true, truncate: true });
  let size = 0, pending: string[] = [], length = 0;
  const flush = async () => {
    const bytes = encoder.encode(pending.join(""));
    size += bytes.length;
    for (let n = 0; n < bytes.length;) n += await file.write(bytes.subarray(n));
    pending = [];
    length = 0;
  };
  for (const line of lines) {
    const text = JSON.stringify(line) + "\n";
    pending.push(text);
    length += text.length;
    if (length >= 1 << 20) await flush();
  }
  await flush();
  return size;
}
