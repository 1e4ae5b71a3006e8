/**
 * Whether the rows an export read of a run's calls are the rows its check hashed. The check hashes a run's rows in
 * one read (on a worker, from its own connection, opened by the file's name after the export's), and the export
 * reads the calls it chose from its own connection: a file renamed over the database's name after the export
 * opened it, or its bytes written over, would let one read be checked and another exported. Each column a line
 * takes of a call, its span and its source is compared with the hashed read of it, and the run's row and its
 * assessments (which the export's filters and its ATIF lines read) whole.
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { TraceRunTables } from "../db/mod.ts";
import type { CallRow } from "./_calls.ts";

/** The columns a line takes of each table, and the column that names the row. */
const BOUND: readonly { table: string; key: string; columns: readonly string[] }[] = [
  { table: "trace_sources", key: "run_id", columns: ["last_hash", "store_uri", "verified"] },
  { table: "trace_spans", key: "span_id", columns: ["seq", "line_hash", "end_time"] },
  {
    table: "trace_model_calls",
    key: "span_id",
    columns: [
      "model",
      "answered_by",
      "provider",
      "message_format",
      "input_tokens",
      "output_tokens",
      "cache_read_input_tokens",
      "finish_reason",
      "tools",
      "error",
    ],
  },
];

const same = (a: unknown, b: unknown) =>
  a === b || (a !== null && a !== undefined && b !== null && b !== undefined && String(a) === String(b));

/**
 * The first place where the export's rows of a run differ from the rows its check hashed, or null.
 *
 * @param runRows The run's chosen calls as the export read them.
 * @param tables The run's rows as its check read them for their digest.
 * @returns `table.column` of the first difference, or null when every column a line takes is the hashed one.
 */
export function unhashedColumn(runRows: readonly CallRow[], tables: TraceRunTables): string | null {
  for (const { table, key, columns } of BOUND) {
    const found = tables.get(table);
    if (found === undefined) return table;
    const at = (name: string) => found.names.indexOf(name);
    const byKey = new Map(found.rows.map((row) => [String(row[at(key)]), row]));
    for (const call of runRows) {
      const row = byKey.get(String(call[key]));
      if (row === undefined) return `${table}.${key}`;
      for (const c of columns) {
        if (at(c) < 0 || !same(row[at(c)], call[c])) return `${table}.${c}`;
      }
    }
  }
  return null;
}

/** The tables the export reads whole of a run (its filters, ATIF's agent and parent), with their key. */
const WHOLE: readonly { table: string; key: string }[] = [
  { table: "trace_runs", key: "run_id" },
  { table: "trace_assessments", key: "n" },
];

const statements = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/**
 * The first place where what the export reads of a run on its own connection differs from the rows its check
 * hashed, or null: the chosen calls' columns ({@linkcode unhashedColumn}), then the run's row and its assessments.
 *
 * @param db The export's connection, in its snapshot.
 * @param runId The run.
 * @param runRows The run's chosen calls as the export read them.
 * @param tables The run's rows as its check read them for their digest.
 * @returns `table.column` of the first difference, or null.
 */
export function unhashedRows(
  db: DatabaseSync,
  runId: string,
  runRows: readonly CallRow[],
  tables: TraceRunTables,
): string | null {
  const column = unhashedColumn(runRows, tables);
  if (column !== null) return column;
  let prepared = statements.get(db);
  if (prepared === undefined) statements.set(db, prepared = new Map());
  for (const { table, key } of WHOLE) {
    const found = tables.get(table);
    if (found === undefined) return table;
    let statement = prepared.get(table);
    if (statement === undefined) {
      prepared.set(table, statement = db.prepare(`SELECT * FROM ${table} WHERE run_id = ? ORDER BY ${key}`));
    }
    const mine = statement.all(runId) as Record<string, unknown>[];
    if (mine.length !== found.rows.length) return table;
    for (const [i, row] of mine.entries()) {
      if (Object.keys(row).length !== found.names.length) return table;
      for (const [j, name] of found.names.entries()) {
        if (!same(found.rows[i]![j], row[name])) return `${table}.${name}`;
      }
    }
  }
  return null;
}
