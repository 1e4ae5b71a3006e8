import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { sqliteRowSource } from "../../../lib/provevi/sqlite/sqlite_check.ts";
import {
  boundedRows,
  RowProblems,
  type RowQuery,
  type RowSource,
} from "../../../lib/provevi/store/row_reading.ts";
import type { SqlValue } from "../../../lib/provevi/store/store_rows.ts";

// A run's rows are read a page at once first (each text up to its share of 64 KiB), then as they come: these
// tests hold that the rows given, and the problems, are those of a reading row by row, across the page's end and
// past a row too wide for the page.

/** A table of `count` rows of run "r", with texts `a` and `b`: `wide` gives some rows a wider text. */
function table(count: number, wide: Map<number, { a?: string; b?: string }>): DatabaseSync {
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t (run_id TEXT, seq INTEGER, a TEXT, b TEXT, PRIMARY KEY (run_id, seq))");
  const insert = db.prepare("INSERT INTO t VALUES (?, ?, ?, ?)");
  for (let seq = 0; seq < count; seq++) {
    const w = wide.get(seq) ?? {};
    insert.run("r", seq, w.a ?? `a${seq}`, w.b ?? `b${seq}`);
  }
  insert.run("other", 0, "x", "y"); // another run's row, never given
  return db;
}

/** The query of run "r"'s rows of table `t`, of which the run implies `most`. */
function query(most: number): RowQuery {
  return {
    table: "t",
    columns: ["seq", "a", "b"],
    texts: ["a", "b"],
    where: "run_id = ?",
    params: ["r"],
    order: "seq",
    most,
    implied: "its lines",
    code: "rows.event_differs",
    key: (row) => `t (seq ${row.seq})`,
  };
}

/** The rows and problems of a reading of run "r", and how many times each way of reading was asked. */
async function read(db: DatabaseSync, most: number) {
  const source = sqliteRowSource(db);
  const asked = { all: 0, each: 0 };
  const counted: RowSource = {
    dialect: "sqlite",
    all: (sql: string, ...params: SqlValue[]) => (asked.all++, source.all(sql, ...params)),
    each: (sql: string, ...params: SqlValue[]) => (asked.each++, source.each(sql, ...params)),
  };
  const q = query(most);
  const problems = new RowProblems("r");
  const rows: { seq: number; a: number; b: number }[] = [];
  for await (const row of boundedRows(counted, q, problems, "r")) {
    rows.push({ seq: Number(row.seq), a: String(row.a).length, b: String(row.b).length });
  }
  return { rows, problems: problems.list.map((p) => p.message), asked };
}

const KIB = 1024;

Deno.test("a run of a page's rows or fewer is read at once, every row given in order", async () => {
  const got = await read(table(200, new Map()), 200);
  assert.deepEqual(got.rows.map((r) => r.seq), [...Array(200).keys()]);
  assert.deepEqual(got.problems, []);
  assert.deepEqual(got.asked, { all: 1, each: 0 });
});

Deno.test("rows past a page, and a row too wide for it, are read as they come, none lost or given twice", async () => {
  const wide = new Map([[10, { a: "a".repeat(100 * KIB) }], [400, { b: "b".repeat(100 * KIB) }]]);
  const got = await read(table(600, wide), 600);
  assert.deepEqual(got.rows.map((r) => r.seq), [...Array(600).keys()]);
  assert.equal(got.rows[10]!.a, 100 * KIB);
  assert.equal(got.rows[400]!.b, 100 * KIB);
  assert.deepEqual(got.problems, []);
  assert.equal(got.asked.all, 1); // the page, up to row 10
  assert.ok(got.asked.each >= 1);
});

Deno.test("a full page and one row more than the run implies: the row past them is a problem, not given", async () => {
  for (const count of [256, 257, 600]) {
    const got = await read(table(count, new Map()), count - 1);
    assert.equal(got.rows.length, count - 1, `${count} rows`);
    assert.deepEqual(got.problems, [
      `t holds more rows of run "r" than its lines imply (${count - 1}): the rest of them is not read`,
    ]);
  }
});

Deno.test("a row past the bound of a row's text is a problem, after a page and before it", async () => {
  const huge = "a".repeat(33 * KIB * KIB);
  for (const at of [3, 300]) {
    const got = await read(table(320, new Map([[at, { a: huge }]])), 320);
    assert.deepEqual(got.rows.map((r) => r.seq), [...Array(320).keys()].filter((s) => s !== at));
    assert.equal(got.problems.length, 1);
    assert.match(
      got.problems[0]!,
      new RegExp(`^t \\(seq ${at}\\) holds more text than a row of the run may`),
    );
  }
});

Deno.test("past the page, rows that may each be wide come one at a time (eachWide), the others in batches (each)", async () => {
  const db = table(600, new Map([[400, { b: "b".repeat(100 * KIB) }]]));
  const source = sqliteRowSource(db);
  const forms: string[] = [];
  const form = (sql: string) => /> 32768\b/.test(sql) ? "page" : /> 16777216\b/.test(sql) ? "fast" : "other";
  const wideSource: RowSource = {
    dialect: "sqlite",
    all: (sql: string, ...params: SqlValue[]) => (forms.push(`all ${form(sql)}`), source.all(sql, ...params)),
    each: (
      sql: string,
      ...params: SqlValue[]
    ) => (forms.push(`each ${form(sql)}`), source.each(sql, ...params)),
    eachWide: (sql: string, ...params: SqlValue[]) => (
      forms.push(`eachWide ${form(sql)}`), source.each(sql, ...params)
    ),
  };
  const q = query(600);
  const seqs: number[] = [];
  for await (const row of boundedRows(wideSource, q, new RowProblems("r"), "r")) seqs.push(Number(row.seq));
  assert.deepEqual(seqs, [...Array(600).keys()]);
  assert.deepEqual(forms, ["all page", "each page", "eachWide fast"]);
});
