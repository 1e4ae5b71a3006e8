import assert from "node:assert/strict";
import canonicalize from "canonicalize";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import type { DatabaseSync } from "node:sqlite";
import { traceRunDigest } from "../../../lib/provtrace/db/run_digest.ts";
import { memoryTraceDb } from "../../../lib/provtrace/db/trace_db.ts";

const RUN = "run-20261201T000000Z-0000d1a5";

/** The digest as RFC 8785 defines it for every row, made with the npm canonicalizer alone. */
function reference(rows: { key: unknown[]; row: Record<string, unknown> }[]): string {
  return sha256Hex(
    rows.map((r) => `trace_assessments ${canonicalize(r.key)}\t${canonicalize(r.row)}\n`).join(""),
  );
}

Deno.test("a run's rows digest of provtrace before format 2 is RFC 8785's for text, numbers and nulls of every kind, on one connection run after run", () => {
  using trace = memoryTraceDb();
  const insert = trace.db.prepare(
    "INSERT INTO trace_assessments (run_id, n, seq, span_id, name, value, source) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const values: [number | null, string | null, string][] = [
    [-0, 'é\u2028\u0000"\\', "naïve 😀 text"],
    [1e21, null, "\u007f\u0080"],
    [0.1 + 0.2, "</script>", ""],
    [9007199254740991, "\t\n", "x"],
    [null, "ü", "z"],
  ];
  const read = trace.db.prepare("SELECT * FROM trace_assessments WHERE n = ?");
  const rows = values.map(([seq, span, name], n) => {
    insert.run(RUN, n, seq, span, name, JSON.stringify({ v: n }), "test");
    return { key: [n], row: read.get(n) as Record<string, unknown> };
  });
  for (let i = 0; i < 3; i++) assert.equal(traceRunDigest(trace.db, RUN).canonical, reference(rows));
});

Deno.test("a blob put where text belongs, even in a row's key, is in a run's RFC 8785 rows digest as its hex", () => {
  using trace = memoryTraceDb();
  // A table made again without its types (as an edit of the file could) takes a blob in its key column.
  trace.db.exec("DROP TABLE trace_assessments");
  trace.db.exec("CREATE TABLE trace_assessments (run_id, n, seq, span_id, name, value, source)");
  const insert = trace.db.prepare(
    "INSERT INTO trace_assessments (run_id, n, seq, span_id, name, value, source) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  insert.run(RUN, new Uint8Array([0, 255]), 1, "s", "name", new Uint8Array([1, 2, 171]), "test");
  insert.run(RUN, 2, 2, "s", "name", "text", "test");
  const hex = (bytes: number[]) => ({ blob: bytes.map((b) => b.toString(16).padStart(2, "0")).join("") });
  const row = (n: unknown, seq: number, value: unknown) => ({
    run_id: RUN,
    n,
    seq,
    span_id: "s",
    name: "name",
    value,
    source: "test",
  });
  const expected = reference([
    // SQLite orders a number before a blob
    { key: [2], row: row(2, 2, "text") },
    { key: [hex([0, 255])], row: row(hex([0, 255]), 1, hex([1, 2, 171])) },
  ]);
  assert.equal(traceRunDigest(trace.db, RUN).canonical, expected);
});

Deno.test("a run's RFC 8785 rows digest stays RFC 8785's for a text that looks like an escape and for a table made again with columns named 9, 10 and __proto__", () => {
  using trace = memoryTraceDb();
  // An object puts index-like keys first and takes __proto__ as its prototype: such a row is written key by key.
  trace.db.exec("DROP TABLE trace_assessments");
  trace.db.exec('CREATE TABLE trace_assessments (run_id, n, "10", "9", "__proto__", name)');
  const insert = trace.db.prepare(
    'INSERT INTO trace_assessments (run_id, n, "10", "9", "__proto__", name) VALUES (?, ?, ?, ?, ?, ?)',
  );
  insert.run(RUN, 1, "ten", "nine", "proto", "\\ud800 is six characters here, not a lone surrogate");
  insert.run(RUN, 2, null, 1.5, "{}", "plain");
  const read = trace.db.prepare("SELECT * FROM trace_assessments WHERE n = ?");
  const rows = [1, 2].map((n) => ({ key: [n], row: { ...(read.get(n) as Record<string, unknown>) } }));
  // node:sqlite's row object keeps a column named __proto__ as its own key, as canonicalize reads it.
  assert.equal(Object.keys(rows[0]!.row).includes("__proto__"), true);
  assert.equal(traceRunDigest(trace.db, RUN).canonical, reference(rows));
});

/** The tables of the digest, in its order, and the columns it reads of each (all, but for trace_sources). */
const DIGEST_TABLES = [
  "trace_sources",
  "trace_runs",
  "trace_spans",
  "trace_model_calls",
  "trace_tokens",
  "trace_call_messages",
  "trace_messages",
  "trace_tool_calls",
  "trace_access",
  "trace_assessments",
];

/** The format 2 digest, as docs/provtrace.md and run_digest.ts say it, of rows given by table. */
function format2(db: DatabaseSync, rows: Map<string, unknown[][]>): string {
  let text = "";
  for (const table of DIGEST_TABLES) {
    const names = table === "trace_sources"
      ? ["run_id", "store_uri", "runs_root", "last_hash", "verified"]
      : (db.prepare(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`).all() as {
        name: string;
      }[])
        .map((c) => c.name);
    text += `${table}\t${names.join(",")}\n`;
    for (const values of rows.get(table) ?? []) {
      for (const v of values) {
        text += typeof v === "string"
          ? `s${v.length}:${v}`
          : v === null
          ? "z"
          : v instanceof Uint8Array
          ? `b${Array.from(v, (b) => b.toString(16).padStart(2, "0")).join("")};`
          : `n${JSON.stringify(v)};`;
      }
      text += "\n";
    }
  }
  return sha256Hex(text);
}

Deno.test("a run's rows digest (format 2) hashes each value as read, typed and length-prefixed, so texts that join alike differ", () => {
  using trace = memoryTraceDb();
  const insert = trace.db.prepare(
    "INSERT INTO trace_assessments (run_id, n, seq, span_id, name, value, source) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  insert.run(RUN, 0, -0, 'é\u2028\u0000"\\', "naïve 😀 text", "{}", "test");
  insert.run(RUN, 1, 0.1 + 0.2, null, "z", '{"v":1}', "s1:x");
  const all = trace.db.prepare("SELECT * FROM trace_assessments WHERE run_id = ? ORDER BY n");
  (all as unknown as { setReturnArrays(on: boolean): void }).setReturnArrays(true);
  const rows = () => new Map([["trace_assessments", all.all(RUN) as unknown as unknown[][]]]);
  assert.equal(traceRunDigest(trace.db, RUN).digest, format2(trace.db, rows()));
  // A value's text moved into the next column gives other text: its length says where it ends.
  const before = traceRunDigest(trace.db, RUN).digest;
  trace.db.exec("UPDATE trace_assessments SET name = 'zs1:x', source = '' WHERE n = 1");
  const after = traceRunDigest(trace.db, RUN);
  assert.notEqual(after.digest, before);
  assert.equal(after.digest, format2(trace.db, rows()));
  // The rows' names and texts (for a difference) are RFC 8785's, as before.
  assert.deepEqual([...after.rows.keys()], ["trace_assessments [0]", "trace_assessments [1]"]);
  assert.equal(JSON.parse(after.rows.get("trace_assessments [1]")!).name, "zs1:x");
});
