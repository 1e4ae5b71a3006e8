import assert from "node:assert/strict";
import { join } from "node:path";
import { openTraceDb } from "../../../lib/provtrace/db/trace_db.ts";
import { queryTrace } from "../../../lib/provtrace/db/query.ts";
import { bufferIo } from "../../../cli/_io.ts";
import { provtrace } from "../../../cli/provtrace.ts";
import { compiledProvtraceFlags, provtraceSelf } from "../_self.ts";
import { QUERY_ROLE_ARG } from "../../../lib/provtrace/db/query_role.ts";

const ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c";

async function emptyDb(): Promise<{ db: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "provtrace-query-" });
  const db = join(dir, "trace.db");
  {
    using trace = openTraceDb(db, { write: true });
    trace.db.exec(`INSERT INTO trace_meta (key, value) VALUES ('note', 'x'), ('blob', x'00ff')`);
  }
  return { db, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

Deno.test("queryTrace() stops a statement that runs past its time limit, and says how to give it longer", async () => {
  await using t = await emptyDb();
  await assert.rejects(
    queryTrace(t.db, ENDLESS, { timeout: 1000 }),
    /the query ran for more than 1 s and was stopped; narrow it, or give a longer --timeout SECONDS \(0: no limit\)$/,
  );
  // The file is as it was, and the next question is answered.
  const { rows } = await queryTrace(t.db, "SELECT value FROM trace_meta WHERE key = 'note'");
  assert.deepEqual(rows, [{ value: "x" }]);
});

Deno.test("queryTrace() stops an answer past its size bound", async () => {
  await using t = await emptyDb();
  await assert.rejects(
    queryTrace(
      t.db,
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x, 'a row of some length' FROM c",
      { maxBytes: 1024 * 1024 },
    ),
    /the answer is larger than 1 MiB and was stopped; narrow the query/,
  );
});

Deno.test("queryTrace() gives each ? its value, and refuses a placeholder without one, a value too many, or a named one", async () => {
  await using t = await emptyDb();
  const { rows } = await queryTrace(t.db, "SELECT value FROM trace_meta WHERE key = ? AND ? = 'y'", {
    params: ["note", "y"],
  });
  assert.deepEqual(rows, [{ value: "x" }]);
  await assert.rejects(
    queryTrace(t.db, "SELECT value FROM trace_meta WHERE key = ?"),
    /the statement has 1 placeholder \(\?\), and 0 values were given: give one value for each, in order$/,
  );
  await assert.rejects(
    queryTrace(t.db, "SELECT ?, ?3", { params: ["a"] }),
    /the statement has 3 placeholders \(\?\), and 1 value was given/,
  );
  await assert.rejects(
    queryTrace(t.db, "SELECT 1", { params: ["a"] }),
    /the statement has no placeholders \(\?\), and 1 value was given/,
  );
  await assert.rejects(queryTrace(t.db, "SELECT :key", { params: [] }), /a named placeholder \(:name/);
});

Deno.test("queryTrace() answers one statement that only reads: a second statement, a write, ATTACH and VACUUM INTO are refused", async () => {
  await using t = await emptyDb();
  const dir = join(t.db, "..");
  for (
    const [sql, message] of [
      ["SELECT 1; DELETE FROM trace_meta", /more than one statement/],
      ["DELETE FROM trace_meta", /does more than read/],
      [`ATTACH '${join(dir, "other.db")}' AS other`, /does more than read/],
      [`VACUUM INTO '${join(dir, "copy.db")}'`, /does more than read/],
      ["PRAGMA journal_mode = DELETE", /does more than read/],
      ["-- nothing", /holds no statement/],
      ["SELEC 1", /near "SELEC": syntax error; see docs\/provtrace.md/],
    ] as const
  ) {
    await assert.rejects(queryTrace(t.db, sql), message, sql);
  }
  await assert.rejects(Deno.stat(join(dir, "copy.db")), Deno.errors.NotFound);
  assert.equal((await queryTrace(t.db, "SELECT count(*) AS n FROM trace_meta")).rows[0]!.n, 4);
  // A trailing semicolon and comment are one statement; the schema's own pragmas may be read.
  assert.equal((await queryTrace(t.db, "SELECT 1 AS one; -- done\n")).rows[0]!.one, 1);
  assert.ok((await queryTrace(t.db, "PRAGMA table_info(trace_spans)")).rows.length > 10);
});

Deno.test("queryTrace() gives a blob back as bytes, in its process and in this one (timeout 0)", async () => {
  await using t = await emptyDb();
  for (const timeout of [30_000, 0]) {
    const { rows } = await queryTrace(t.db, "SELECT value FROM trace_meta WHERE key = 'blob'", { timeout });
    assert.deepEqual(rows[0]!.value, Uint8Array.of(0, 255));
  }
});

Deno.test("provtrace query takes --param and --timeout; a bad --timeout is a wrong command line", async () => {
  await using t = await emptyDb();
  let io = bufferIo();
  assert.equal(
    await provtrace(
      ["query", "--db", t.db, "SELECT value FROM trace_meta WHERE key = ?", "--param", "note"],
      io,
    ),
    0,
    io.stderr.join("\n"),
  );
  assert.deepEqual(io.stdout, ["value", "x"]);
  io = bufferIo();
  assert.equal(await provtrace(["query", "--db", t.db, ENDLESS, "--timeout", "0.5"], io), 1);
  assert.deepEqual(io.stderr.length, 1);
  assert.match(
    io.stderr[0]!,
    /^provtrace: the query cannot be run on ".*": the query ran for more than 0.5 s/,
  );
  io = bufferIo();
  assert.equal(await provtrace(["query", "--db", t.db, "SELECT 1", "--timeout", "soon"], io), 2);
  assert.match(io.stderr[0]!, /--timeout soon is not a number of seconds/);
  io = bufferIo();
  assert.equal(await provtrace(["query", "--db", t.db, "SELECT ?"], io), 1);
  assert.match(io.stderr[0]!, /the statement has 1 placeholder/);
});

Deno.test("deno task provtrace query answers, and stops at its time limit, under the task's own permission flags", async () => {
  await using t = await emptyDb();
  const config = JSON.parse(await Deno.readTextFile(new URL("../../../deno.json", import.meta.url)));
  const words = (config.tasks.provtrace as string).split(" ").slice(1);
  const run = async (args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...words, "query", "--db", t.db, ...args],
      cwd: new URL("../../../", import.meta.url).pathname,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    return { code: out.code, out: text(out.stdout), err: text(out.stderr) };
  };
  const answered = await run(["SELECT value FROM trace_meta WHERE key = ?", "--param", "note"]);
  assert.equal(answered.code, 0, answered.err);
  assert.equal(answered.out, "value\nx\n");
  const stopped = await run([ENDLESS, "--timeout", "0.5"]);
  assert.equal(stopped.code, 1, stopped.err);
  assert.match(stopped.err, /the query ran for more than 0.5 s and was stopped/);
  assert.doesNotMatch(stopped.err, /NotCapable/);
});

Deno.test("a compiled provtrace answers a query in itself, in the query role (not deno): the answer, the time limit and the refusals hold", async () => {
  await using t = await emptyDb();
  const flags = compiledProvtraceFlags();
  assert.ok(flags.includes("--allow-run=git,provtrace"), "a compiled provtrace may start itself, not deno");
  const self = provtraceSelf();
  const { rows } = await queryTrace(t.db, "SELECT value FROM trace_meta WHERE key = ?", {
    params: ["blob"],
    self,
  });
  assert.deepEqual(rows, [{ value: new Uint8Array([0, 255]) }]);
  await assert.rejects(
    queryTrace(t.db, ENDLESS, { timeout: 500, self }),
    /the query ran for more than 0.5 s and was stopped/,
  );
  await assert.rejects(
    queryTrace(t.db, "SELECT * FROM trace_meta; DELETE FROM trace_meta", { self }),
    /the SQL holds more than one statement/,
  );
  await assert.rejects(queryTrace(t.db, `ATTACH '${t.db}' AS other`, { self }), /does more than read/);
});

Deno.test("the query role reports the permissions it kept, and an answer from a role that kept any is refused", async () => {
  await using t = await emptyDb();
  const role = [...provtraceSelf(), QUERY_ROLE_ARG];
  const child = new Deno.Command(role[0]!, {
    args: role.slice(1),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(
    new TextEncoder().encode(JSON.stringify({ db: t.db, sql: "SELECT 1 AS one", params: [] })),
  );
  await writer.close();
  const out = await child.output();
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines, [{ columns: ["one"] }, [1], { end: true, kept: [] }]);
  // A program in the role's place that answers but keeps its permissions (or does not say) is not believed.
  const dir = await Deno.makeTempDir();
  try {
    for (const end of [`{"end":true,"kept":["read","net"]}`, `{"end":true}`]) {
      const liar = join(dir, "liar.ts");
      await Deno.writeTextFile(
        liar,
        `await new Response(Deno.stdin.readable).text();\nconsole.log('{"columns":["one"]}\\n[1]\\n${end}');`,
      );
      await assert.rejects(
        queryTrace(t.db, "SELECT 1 AS one", { self: [Deno.execPath(), "run", "--no-prompt", liar] }),
        /the process that answers kept permissions it must give up \((read, net|\(not said\))\)/,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
