/**
 * Real runs for provtrace's tests, made by provrun with the scripted `test:` model on a real git catalog: an
 * agent-backend run with tool calls (the seed's PydanticAI run) and a call-backend run (the seed's LiteLLM
 * run) whose provider ran a tool, both with committed bundles; and the helpers to read a trace database whole
 * and to rewrite a run's events and manifest together.
 *
 * Runs in the file store are made once in a test file's process, and each test gets a copy of the folder
 * (`cp -a`: the repository, its cache, the runs) with a catalog opened on the copy, so that a test may change
 * its runs as it likes. The copied runs' evidence names the folder they were made in, as a moved run's does.
 * @module
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { eventLine } from "../../lib/provevi/evidence/event.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { buildManifest, manifestText } from "../../lib/provevi/evidence/manifest.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import type { EvidenceEvent } from "../../lib/provevi/evidence/event.ts";
import { RunFile } from "../../lib/provrun/run/run_file.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { buildTrace } from "../../lib/provtrace/build/build.ts";
import { makeWritable } from "../_files.ts";
import { gitCatalog, openGitCatalog } from "../provrun/_catalog.ts";

const CSV = "quarter,revenue_musd\nQ1,41.2\nQ2,43.0\nQ3,48.2\n";

/** The agent's script: five model calls, four tool calls, one of them run by the provider. */
const AGENT_TURNS = `
      - tool_calls: [{ id: c1, name: list_files, args: { path: /input } }]
        usage: { input: 30, output: 12 }
      - tool_calls: [{ id: c2, name: read_file, args: { path: /input/revenue.csv } }]
        usage: { input: 50, output: 10, cache_read: 30 }
      - provider_tools: [{ id: s1, name: web_search, args: { q: "revenue Q3" }, result: { hits: 3 } }]
        tool_calls: [{ id: c3, name: grep_file, args: { pattern: "Q3", path: /input/revenue.csv } }]
        usage: { input: 70, output: 14, cache_read: 50 }
      - tool_calls: [{ id: c4, name: write_file, args: { path: /output/answer.txt, content: "Revenue grew 12% in Q3." } }]
        usage: { input: 90, output: 20, cache_read: 70 }
      - text: "Revenue grew 12% in Q3."
        usage: { input: 110, output: 9, cache_read: 90 }`;

/** Runs made for a test, in a temporary folder removed at the end. */
export interface TestRuns extends AsyncDisposable {
  root: string;
  runs: string;
  catalog: Awaited<ReturnType<typeof gitCatalog>>["catalog"];
  /** The agent-backend run. */
  agentRun: string;
  /** The call-backend run. */
  callRun: string;
}

/** The folder of the runs made first in this process, in the file store, that each later test copies. */
let made: Promise<{ root: string; agentRun: string; callRun: string }> | null = null;

/**
 * The two runs, in a folder of their own: in the file store, a copy of the ones made first in this process;
 * in another store, made anew (a sqlite store's rows name the folders, a PostgreSQL database is not copied).
 */
export async function makeRuns(options: { store?: (root: string) => string } = {}): Promise<TestRuns> {
  if (options.store) return await freshRuns(options);
  made ??= freshRuns({}).then(async (t) => {
    await t.catalog.close();
    globalThis.addEventListener("unload", () => {
      new Deno.Command("chmod", { args: ["-R", "u+w", t.root] }).outputSync();
      Deno.removeSync(t.root, { recursive: true });
    });
    return { root: t.root, agentRun: t.agentRun, callRun: t.callRun };
  });
  const { root: from, agentRun, callRun } = await made;
  const root = await Deno.makeTempDir({ prefix: "provtrace-runs-" });
  const copied = await new Deno.Command("cp", { args: ["-a", `${from}/.`, root] }).output();
  if (!copied.success) throw new Error(`cp -a failed: ${new TextDecoder().decode(copied.stderr)}`);
  const t = await openGitCatalog(root);
  return {
    root,
    runs: t.runs,
    catalog: t.catalog,
    agentRun,
    callRun,
    [Symbol.asyncDispose]: () => t[Symbol.asyncDispose](),
  };
}

/** The runs and their trace database, made once in this process by {@linkcode builtRuns}. */
let built: Promise<{ t: TestRuns; db: string }> | null = null;

/**
 * The two runs and a trace database built from them (`trace.db` in their folder), made once in this process for
 * the tests that only read them (a query, an export kept in memory), and removed when it ends. Nothing writes
 * to them, so no test depends on another or on the order they run in: a test that records an export (which
 * writes its manifest into the database) takes {@linkcode ownBuiltRuns}, and one that changes its runs
 * {@linkcode makeRuns}.
 */
export function builtRuns(): Promise<{ t: TestRuns; db: string }> {
  built ??= (async () => {
    const t = await makeRuns();
    globalThis.addEventListener("unload", () => {
      new Deno.Command("chmod", { args: ["-R", "u+w", t.root] }).outputSync();
      Deno.removeSync(t.root, { recursive: true });
    });
    const db = join(t.root, "trace.db");
    const result = await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog });
    if (result.refused.length) throw new Error(`the build refused ${JSON.stringify(result.refused)}`);
    return { t, db };
  })();
  return built;
}

/**
 * {@linkcode builtRuns}'s runs with a trace database of the test's own, a copy of the built one's file, in a new
 * folder for what the test writes (exports, configs, caches), removed when it is disposed: a copy takes
 * milliseconds where a build of its own took a second or more.
 */
export async function ownBuiltRuns(): Promise<{ t: TestRuns; db: string; dir: string } & AsyncDisposable> {
  const { t, db: shared } = await builtRuns();
  const dir = await Deno.makeTempDir({ prefix: "provtrace-db-" });
  const db = join(dir, "trace.db");
  await Deno.copyFile(shared, db);
  // The build's connection is closed, so its WAL is folded into the file; one left over goes with it.
  await Deno.copyFile(`${shared}-wal`, `${db}-wal`).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
  return { t, db, dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

/** Makes the two runs. */
async function freshRuns(options: { store?: (root: string) => string }): Promise<TestRuns> {
  const t = await gitCatalog({ "finance/revenue.csv": CSV });
  const store = options.store ? `, store: "${options.store(t.root)}"` : "";
  const agent = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict, session_id: "conv-7", bundle: true${store} }
agent:
  name: analyst
  backend: agent
  model: "test:"
  script:
    model: answer-1
    turns:
${AGENT_TURNS}
prompt: What was the revenue growth in Q3?
inputs:
  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }
outputs: [answer.txt]
`);
  const call = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict, bundle: true${store} }
agent:
  name: revenue-question
  backend: call
  model: "test:"
  instructions: Answer in one sentence.
  script:
    model: answer-2
    turns:
      - provider_tools: [{ id: s9, name: web_search, args: { q: "revenue Q3" }, result: { hits: 5 } }]
        text: "Revenue grew 12% in Q3."
        usage: { input: 40, output: 9 }
prompt: What was the revenue growth in Q3?
inputs:
  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }
outputs: [answer.txt]
`);
  const a = await runFile(agent, { catalog: t.catalog, runs: t.runs });
  if (a.status !== "completed") throw new Error(`the agent run failed: ${JSON.stringify(a.error)}`);
  const c = await runFile(call, { catalog: t.catalog, runs: t.runs });
  if (c.status !== "completed") throw new Error(`the call run failed: ${JSON.stringify(c.error)}`);
  return {
    root: t.root,
    runs: t.runs,
    catalog: t.catalog,
    agentRun: a.runId,
    callRun: c.runId,
    [Symbol.asyncDispose]: () => t[Symbol.asyncDispose](),
  };
}

/**
 * The rows of one SQL statement on a trace database, read in this process: the tests' own look at the file
 * (`queryTrace`, with its process and time limit, is tested in query_test.ts).
 */
export function ask(path: string, sql: string): { rows: Record<string, unknown>[] } {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return { rows: db.prepare(sql).all() as Record<string, unknown>[] };
  } finally {
    db.close();
  }
}

/**
 * Every row of every trace_ table, ordered, for comparing two databases. The time of each build
 * (`trace_sources.built_at`) is left out: it is when the build ran, not what it built.
 */
export function dumpTrace(path: string): Record<string, unknown[]> {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const tables = (db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'trace%' ORDER BY name",
    ).all() as { name: string }[]).map((r) => r.name);
    const out: Record<string, unknown[]> = {};
    for (const table of [...tables, "trace_steps"]) {
      const rows = db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
      out[table] = rows.map((r) => {
        const { built_at: _b, ...rest } = r;
        return JSON.stringify(rest);
      }).sort();
    }
    return out;
  } finally {
    db.close();
  }
}

/**
 * Rewrites a sealed run's events and manifest together, so that they agree with each other: `change` edits
 * the events, the chain and the manifest's last hash are made again. `verify` alone then passes; only the
 * committed bundle shows the change.
 */
export async function rewriteRun(
  folder: string,
  change: (events: EvidenceEvent[]) => void,
): Promise<void> {
  const evidence = join(folder, "evidence");
  await makeWritable(folder);
  const read = readEventsText(await Deno.readTextFile(join(evidence, "events.jsonl")));
  change(read.events);
  const lines: string[] = [];
  let prev: string | null = null;
  for (const e of read.events) {
    e.prev = prev;
    const line = eventLine(e);
    lines.push(line);
    prev = sha256Hex(line);
  }
  await Deno.writeTextFile(join(evidence, "events.jsonl"), lines.map((l) => l + "\n").join(""));
  const old = JSON.parse(await Deno.readTextFile(join(evidence, "manifest.json")));
  const manifest = buildManifest({ ...old, events: lines.length, last_hash: prev }, {
    layout: old.format === "provevi-manifest/2" ? "pack" : "files",
  });
  await Deno.writeTextFile(join(evidence, "manifest.json"), manifestText(manifest));
}
