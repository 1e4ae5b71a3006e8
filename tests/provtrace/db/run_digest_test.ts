import assert from "node:assert/strict";
import canonicalize from "canonicalize";
import { sha256Hex } from "../../../lib/provevi/evidence/mod.ts";
import { memoryTraceDb, traceRunDigest } from "../../../lib/provtrace/db/mod.ts";

const RUN = "run-20261201T000000Z-0000d1a5";

/** The digest as RFC 8785 defines it for every row, made with the npm canonicalizer alone. */
function reference(rows: { key: unknown[]; row: Record<string, unknown> }[]): string {
  return sha256Hex(
    rows.map((r) => `trace_assessments ${canonicalize(r.key)}\t${canonicalize(r.row)}\n`).join(""),
  );
}

Deno.test("a run's rows digest is RFC 8785's for text, numbers and nulls of every kind, on one connection run after run", () => {
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
  for (let i = 0; i < 3; i++) assert.equal(traceRunDigest(trace.db, RUN).digest, reference(rows));
});

Deno.test("a blob put where text belongs, even in a row's key, is in a run's rows digest as its hex", () => {
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
  assert.equal(traceRunDigest(trace.db, RUN).digest, expected);
});

Deno.test("a run's rows digest stays RFC 8785's for a text that looks like an escape and for a table made again with columns named 9, 10 and __proto__", () => {
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
  assert.equal(traceRunDigest(trace.db, RUN).digest, reference(rows));
});
