/**
 * A trace database edited after its build: any table's rows changed, added, removed or moved between runs, a
 * run's rows rewritten together with the digest the build kept, its schema changed (a view that says
 * something else, a table swapped for a view, a trigger), rows of no run, and a run's source changed in its
 * store (alone, or with the file's last hash and rows made to match). `provtrace check` names each, and no
 * export writes a line that the evidence does not give: it refuses the run (or the whole file, for a changed
 * schema). The file is built with a rows key, as the CLI builds it, and checked and exported with it: a row edit
 * breaks the MAC of the run's rows, so check and the export build the run again and name the row; a MAC made
 * again without the key does not hold. Real runs made by provrun, a real sqlite store with assessments, a real
 * git catalog.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { RunFile } from "../../lib/provrun/run/run_file.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { buildTrace } from "../../lib/provtrace/build/build.ts";
import { checkTrace, type CheckTraceOptions, type TraceCheck } from "../../lib/provtrace/build/check.ts";
import { queryTrace } from "../../lib/provtrace/db/query.ts";
import { exportTrace, type TraceExport } from "../../lib/provtrace/export/export.ts";
import { rowsMac } from "../../lib/provtrace/db/rows_key.ts";
import { traceRunDigest } from "../../lib/provtrace/db/run_digest.ts";
import { makeRuns, rewriteRun, type TestRuns } from "../provtrace/_runs.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("provtrace attacks");
const queries = new Tally("provtrace query attacks");

interface World {
  t: TestRuns;
  store: string;
  base: string;
  /** The rows key the file was built with. */
  keyFile: string;
  n: number;
}

let world: Promise<World> | null = null;

/** The runs, their sqlite store with a reward on each run, and a trace database built from them, made once. */
function setUp(): Promise<World> {
  world ??= (async () => {
    const t = await makeRuns({ store: (root) => `sqlite:///${join(root, "evidence.db")}` });
    const store = `sqlite:///${join(t.root, "evidence.db")}`;
    {
      await using s = new SqliteStore(join(t.root, "evidence.db"), { runs: t.runs });
      await s.assess(t.agentRun, "reward", 0.9, { source: "grader" });
      await s.assess(t.callRun, "reward", 0.2, { source: "grader" });
    }
    const base = join(t.root, "base.db");
    const keyFile = join(t.root, "home", "rows.key");
    const built = await buildTrace({ store, runs: t.runs, db: base, catalog: t.catalog, keyFile });
    assert.deepEqual(built.refused, []);
    const db = new DatabaseSync(base);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    return { t, store, base, keyFile, n: 0 };
  })();
  return world;
}

/** A copy of the built database, edited by `edit`. */
async function edited(w: World, edit: (db: DatabaseSync) => void | Promise<void>): Promise<string> {
  const file = join(w.t.root, `attack-${++w.n}.db`);
  await Deno.copyFile(w.base, file);
  const db = new DatabaseSync(file);
  try {
    await edit(db);
  } finally {
    db.close();
  }
  return file;
}

interface Outcome {
  check: TraceCheck;
  exported: TraceExport | Error;
}

async function attack(
  w: World,
  file: string,
  exportOptions: Partial<Parameters<typeof exportTrace>[1]> = {},
): Promise<Outcome> {
  const options: CheckTraceOptions = {
    catalog: w.t.catalog,
    stores: [w.store],
    runs: w.t.runs,
    keyFile: w.keyFile,
  };
  const check = await checkTrace(file, options);
  const exported = await exportTrace(file, { kind: "steps", ...options, ...exportOptions })
    .catch((error: Error) => error);
  // The check whose rows a worker hashes (an export of many runs) says the same of every attack, word for word.
  const inWorker = await exportTrace(file, { kind: "steps", ...options, ...exportOptions, checkWorker: true })
    .catch((error: Error) => error);
  const words = (e: TraceExport | Error) => e instanceof Error ? e.message : JSON.stringify(e);
  assert.equal(words(inWorker), words(exported), "the export with its check's rows hashed on a worker");
  return { check, exported };
}

/** What check said of the file and its runs, in one text. */
function said(check: TraceCheck): string {
  return [...check.problems, ...check.runs.map((r) => `${r.run_id} ${r.state} ${r.problem ?? ""}`)].join(
    "\n",
  );
}

/**
 * Stopped: check is not ok, and the export wrote no forged text and refused the runs (or the file). Named: what
 * check said names the place.
 */
function count(name: string, o: Outcome, expect: { runs: string[]; names: RegExp; forged?: string }): void {
  const refusedAll = o.exported instanceof Error;
  const text = refusedAll ? "" : JSON.stringify((o.exported as TraceExport).lines);
  const refused = refusedAll ? expect.runs : (o.exported as TraceExport).refused.map((r) => r.run_id);
  const stopped = !o.check.ok && !text.includes(expect.forged ?? "FORGED") &&
    expect.runs.every((r) => refused.includes(r));
  const named = expect.names.test(said(o.check));
  tally.add(name, { stopped, recorded: named });
  assert.ok(stopped, `${name}: ${said(o.check)}\n${refusedAll ? o.exported : JSON.stringify(refused)}`);
  assert.ok(named, `${name}: ${said(o.check)}`);
}

const forgedPart = (role: string, text: string) => JSON.stringify({ kind: "text", role, text });

const ROW_EDITS: {
  name: string;
  edit: (db: DatabaseSync, w: World) => void;
  runs: (w: World) => string[];
  names: RegExp;
  exportOptions?: Partial<Parameters<typeof exportTrace>[1]>;
}[] = [
  {
    name: "a message's text and content rewritten",
    edit: (db) =>
      db.exec(`UPDATE trace_messages SET text = 'FORGED', content = json_set(content, '$.text', 'FORGED')
        WHERE role = 'assistant' AND part_kind = 'text'`),
    runs: (w) => [w.t.agentRun, w.t.callRun],
    names: /trace_messages \["[0-9a-f]{64}"\]: content, text differ/,
  },
  {
    name: "a tool's result rewritten",
    edit: (db) => db.exec(`UPDATE trace_tool_calls SET result = '"FORGED"' WHERE tool = 'read_file'`),
    runs: (w) => [w.t.agentRun],
    names: /trace_tool_calls \["c2"\]: result differ/,
  },
  {
    name: "a tool's span removed",
    edit: (db) =>
      db.exec(
        `DELETE FROM trace_spans WHERE span_id = (SELECT span_id FROM trace_tool_calls WHERE tool = 'write_file')`,
      ),
    runs: (w) => [w.t.agentRun],
    names: /trace_spans \["[0-9a-f]{16}"\]: missing/,
  },
  {
    name: "a message slipped into a call's conversation",
    edit: (db) => {
      const hash = "f".repeat(64);
      db.prepare(
        "INSERT INTO trace_messages (hash, role, part_kind, text, content) VALUES (?, 'user', 'text', 'FORGED', ?)",
      ).run(hash, forgedPart("user", "FORGED"));
      db.exec(`INSERT INTO trace_call_messages (run_id, span_id, direction, position, message, message_hash)
        SELECT run_id, span_id, 'sent', 99, 99, '${hash}' FROM trace_model_calls LIMIT 1`);
    },
    runs: () => [],
    names: /trace_call_messages \[.*99\]: a row the run's evidence does not give/,
  },
  {
    name: "a run's reward raised to pass an export's filter",
    edit: (db, w) =>
      db.prepare("UPDATE trace_assessments SET value = '0.99' WHERE run_id = ?").run(w.t.callRun),
    runs: (w) => [w.t.callRun],
    names: /trace_assessments \[0\]: value differ/,
    exportOptions: { assessment: "reward>=0.5" },
  },
  {
    name: "a tool call moved to another run",
    edit: (db, w) =>
      db.prepare("UPDATE trace_tool_calls SET run_id = ? WHERE run_id = ? AND tool = 'read_file'").run(
        w.t.callRun,
        w.t.agentRun,
      ),
    runs: (w) => [w.t.agentRun, w.t.callRun],
    names: /trace_tool_calls \["c2"\]: (missing|a row the run's evidence does not give)/,
  },
  {
    name: "rows rewritten together with the digest the build kept",
    edit: (db, w) => {
      db.exec(`UPDATE trace_messages SET text = 'FORGED', content = json_set(content, '$.text', 'FORGED')
        WHERE role = 'assistant' AND part_kind = 'text'`);
      for (const run of [w.t.agentRun, w.t.callRun]) {
        db.prepare("UPDATE trace_sources SET rows_digest = ? WHERE run_id = ?").run(
          traceRunDigest(db, run).digest,
          run,
        );
      }
    },
    runs: (w) => [w.t.agentRun, w.t.callRun],
    names: /digest kept at the build was rewritten with them/,
  },
  {
    name: "rows rewritten with their digest and a MAC made under another key",
    edit: (db, w) => {
      db.exec(`UPDATE trace_messages SET text = 'FORGED', content = json_set(content, '$.text', 'FORGED')
        WHERE role = 'assistant' AND part_kind = 'text'`);
      const forger = new Uint8Array(32).fill(7);
      for (const run of [w.t.agentRun, w.t.callRun]) {
        const digest = traceRunDigest(db, run).digest;
        const manifest = Deno.readTextFileSync(join(w.t.runs, run, "evidence", "manifest.json"));
        const mac = rowsMac(forger, {
          run_id: run,
          rows_digest: digest,
          manifest_sha256: sha256Hex(manifest),
        });
        db.prepare("UPDATE trace_sources SET rows_digest = ?, rows_mac = ? WHERE run_id = ?").run(
          digest,
          mac,
          run,
        );
      }
    },
    runs: (w) => [w.t.agentRun, w.t.callRun],
    names: /digest kept at the build was rewritten with them/,
  },
  {
    name: "a run's rows given the other run's MAC",
    edit: (db, w) => {
      db.prepare("UPDATE trace_tool_calls SET result = '\"FORGED\"' WHERE run_id = ?").run(w.t.agentRun);
      db.prepare(
        "UPDATE trace_sources SET rows_mac = (SELECT rows_mac FROM trace_sources WHERE run_id = ?) WHERE run_id = ?",
      ).run(w.t.callRun, w.t.agentRun);
    },
    runs: (w) => [w.t.agentRun],
    names: /trace_tool_calls \[.*\]: result differ/,
  },
  {
    name: "rows of a run the database does not hold",
    edit: (db) =>
      db.exec(`INSERT INTO trace_tool_calls (run_id, call_id, tool, arguments, result, deferred, provider_run,
        output_tool) VALUES ('run-20261130T000000Z-00000000', 'x1', 'read_file', '{}', '"FORGED"', 0, 0, 0)`),
    runs: () => [],
    names: /trace_tool_calls holds 1 row of runs the database does not hold/,
  },
  {
    name: "a message's text given hidden bytes after a NUL, which node:sqlite does not read",
    edit: (db) =>
      db.exec(`UPDATE trace_messages SET text = text || char(0) || 'FORGED'
        WHERE role = 'assistant' AND part_kind = 'text'`),
    runs: () => [],
    names: /trace_messages\.text holds \d+ texts? whose bytes are not the text read/,
  },
];

for (const a of ROW_EDITS) {
  Deno.test(`provtrace attack: ${a.name} is named by check, and no export writes it`, async () => {
    const w = await setUp();
    const file = await edited(w, (db) => a.edit(db, w));
    const o = await attack(w, file, a.exportOptions);
    count(a.name, o, { runs: a.runs(w), names: a.names });
  });
}

const SCHEMA_EDITS: { name: string; sql: string; names: RegExp }[] = [
  {
    name: "the view trace_steps made to say something else",
    sql: "DROP VIEW trace_steps; CREATE VIEW trace_steps AS SELECT 'FORGED' AS state",
    names: /the view trace_steps is not the one the schema makes/,
  },
  {
    name: "a table swapped for a view of forged rows",
    sql: `ALTER TABLE trace_tool_calls RENAME TO kept; CREATE VIEW trace_tool_calls AS
      SELECT run_id, call_id, span_id, seq, model_span_id, tool, arguments, '"FORGED"' AS result, error,
        error_message, executed_by, deferred, provider_run, output_tool FROM kept`,
    names: /trace_tool_calls is a view, not the table the schema makes/,
  },
  {
    name: "a trigger that rewrites the rows a build writes",
    sql: `CREATE TRIGGER forge AFTER INSERT ON trace_messages BEGIN
      UPDATE trace_messages SET text = 'FORGED' WHERE hash = NEW.hash; END`,
    names: /the trigger forge is not part of a trace database/,
  },
];

for (const a of SCHEMA_EDITS) {
  Deno.test(`provtrace attack: ${a.name} is named by check; the export and the build refuse the file`, async () => {
    const w = await setUp();
    const file = await edited(w, (db) => db.exec(a.sql));
    const o = await attack(w, file);
    assert.ok(o.exported instanceof Error && /schema is not a trace database's/.test(o.exported.message));
    const build = await buildTrace({
      store: w.store,
      runs: w.t.runs,
      db: file,
      catalog: w.t.catalog,
      runId: w.t.agentRun,
    })
      .then(() => null, (error: Error) => error);
    assert.match(String(build), /schema is not a trace database's/);
    count(a.name, o, { runs: [w.t.agentRun, w.t.callRun], names: a.names });
  });
}

/** A run of the attacker's own, in a file store of theirs: it verifies, and its answer is FORGED. */
async function forgedRun(w: World): Promise<{ runs: string; runId: string }> {
  const runs = join(w.t.root, `evil-runs-${++w.n}`);
  const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: revenue-question
  backend: call
  model: "test:"
  script:
    model: answer-2
    turns:
      - text: "FORGED"
        usage: { input: 40, output: 9 }
prompt: What was the revenue growth in Q3?
`);
  const outcome = await runFile(file, { runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  return { runs, runId: outcome.runId };
}

Deno.test("provtrace attack: a run of the attacker's own store, built into the file, is refused by check and the export", async () => {
  const w = await setUp();
  const evil = await forgedRun(w);
  const file = await edited(w, () => {});
  const built = await buildTrace({ store: "file", runs: evil.runs, db: file, runId: evil.runId });
  assert.deepEqual(built.refused, []);
  const o = await attack(w, file);
  count("a run of the attacker's own store built into the file", o, {
    runs: [evil.runId],
    names: new RegExp(`${evil.runId} unreadable it was built from the runs root ${evil.runs}`),
  });
});

Deno.test("provtrace attack: a run's source moved to the attacker's server is refused without a connection to it", async () => {
  const w = await setUp();
  // A server of the attacker's, which would ask for the user's PGPASSWORD: it must never be reached.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let reached = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      reached++;
      conn.close();
    }
  })();
  try {
    const uri = `postgresql://ada@127.0.0.1:${listener.addr.port}/evidence`;
    const file = await edited(w, (db) => {
      db.prepare("UPDATE trace_sources SET store_uri = ? WHERE run_id = ?").run(uri, w.t.agentRun);
    });
    const o = await attack(w, file);
    count("a run's source moved to the attacker's server", o, {
      runs: [w.t.agentRun],
      names: new RegExp(
        `${w.t.agentRun} unreadable it was built from the store ${uri}, which --store does not name`,
      ),
    });
    assert.equal(reached, 0, "the attacker's server was reached");
  } finally {
    listener.close();
    await accepting.catch(() => {});
  }
});

// These two change the store itself, so they run last, in this order.
Deno.test("provtrace attack: a run changed in its store after the build is named by check, and no export writes it", async () => {
  const w = await setUp();
  const file = await edited(w, () => {});
  await rewriteRun(join(w.t.runs, w.t.callRun), (events) => {
    events.find((e) => e.type === "model_called")!.data.input_tokens = 4;
  });
  const o = await attack(w, file);
  count("a run changed in its store after the build", o, {
    runs: [w.t.callRun],
    names: new RegExp(`${w.t.callRun} changed the store's last hash is`),
  });
});

Deno.test("provtrace attack: a run changed in its store, with the file's last hash, rows and flag made to match, is named by check, and no export writes it", async () => {
  const w = await setUp();
  // The changed run built into the file as it is now (unverified), then marked verified.
  const file = await edited(w, () => {});
  const forced = await buildTrace({
    store: w.store,
    runs: w.t.runs,
    db: file,
    catalog: w.t.catalog,
    runId: w.t.callRun,
    allowUnverified: true,
    keyFile: w.keyFile,
  });
  assert.equal(forced.added[0]!.verified, false);
  const db = new DatabaseSync(file);
  db.prepare("UPDATE trace_sources SET verified = 1, problems = '[]' WHERE run_id = ?").run(w.t.callRun);
  db.close();
  const o = await attack(w, file);
  count("a changed run with the file's last hash, rows and flag made to match", o, {
    runs: [w.t.callRun],
    names: new RegExp(`${w.t.callRun} unverified it was built verified, and it does not verify now`),
    forged: '"input_tokens":4,',
  });
});

// The questions that never end are stopped by their 1 s limit (each spends the CPU of its limit: the stop, not the
// length of the limit, is what is tried); the others are refused before they run, and get a limit no busy machine
// reaches (the limit counts from the answering process's start).
const QUERIES: {
  name: string;
  sql: (dir: string) => string;
  refused: RegExp;
  wrote?: string;
  timeout?: number;
}[] = [
  {
    name: "a recursive question that never ends",
    sql: () => "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    refused: /the query ran for more than 1 s and was stopped/,
    timeout: 1000,
  },
  {
    name: "a cross join of eight tables",
    sql: () =>
      "SELECT count(*) FROM trace_spans a, trace_spans b, trace_spans c, trace_spans d, trace_spans e, trace_spans f, trace_call_messages g, trace_call_messages h",
    refused: /the query ran for more than 1 s and was stopped/,
    timeout: 1000,
  },
  {
    name: "an answer that never ends",
    sql: () =>
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x, hex(randomblob(64)) FROM c",
    refused: /the query ran for more than 1 s|the answer is larger than/,
    timeout: 1000,
  },
  {
    name: "a file written by VACUUM INTO",
    sql: (dir) => `VACUUM INTO '${join(dir, "written.db")}'`,
    refused: /does more than read/,
    wrote: "written.db",
  },
  {
    name: "another file read through ATTACH",
    sql: (dir) => `ATTACH '${join(dir, "evidence.db")}' AS evidence`,
    refused: /does more than read/,
  },
  {
    name: "a write after a question, as a second statement",
    sql: () => "SELECT 1; DELETE FROM trace_sources",
    refused: /more than one statement/,
  },
];

for (const q of QUERIES) {
  Deno.test(`provtrace query attack: ${q.name} is stopped with one line`, async () => {
    const w = await setUp();
    const file = await edited(w, () => {});
    const error = await queryTrace(file, q.sql(w.t.root), {
      timeout: q.timeout ?? 120_000,
      maxBytes: 8 * 1024 * 1024,
    })
      .then(() => null, (e: Error) => e);
    const wrote = q.wrote ? await Deno.stat(join(w.t.root, q.wrote)).then(() => true, () => false) : false;
    const stopped = error !== null && q.refused.test(error.message) && !wrote;
    const sources = (await queryTrace(file, "SELECT count(*) AS n FROM trace_sources")).rows[0]!.n;
    queries.add(q.name, { stopped, recorded: sources === 2 && !String(error?.message).includes("\n") });
    assert.ok(stopped, `${q.name}: ${error?.message}`);
  });
}

Deno.test("the provtrace attack counts", async () => {
  console.log(tally.line({ stopped: "stopped", recorded: "named by check" }));
  console.log(queries.line({ stopped: "stopped", recorded: "one line, file unchanged" }));
  if (world) await (await world).t[Symbol.asyncDispose]();
  assert.equal(tally.missed.length, 0, tally.line());
  assert.equal(tally.tried, ROW_EDITS.length + SCHEMA_EDITS.length + 4);
  assert.equal(queries.missed.length, 0, queries.line());
  assert.equal(queries.tried, QUERIES.length);
});
