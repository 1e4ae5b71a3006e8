/**
 * The rows of an export's manifest in the trace database (`trace_export_lines`): a row per line and event, which
 * `provtrace lineage` reads from a run to the exports and lines it fed.
 * @module
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";

/** How many rows of `trace_export_lines` one INSERT holds: 5 values each, well under SQLite's 32,766. */
const ROWS_PER_INSERT = 200;

/**
 * Writes a row of `trace_export_lines` per line and event the manifest names (one already there is kept), from
 * the manifest in hand: a few statements of many rows each.
 * An export of 100,000 lines has hundreds of thousands, and a statement each was a good part of its time; one
 * statement over the manifest's JSON text (json_each within json_each) parsed each run's text again per row.
 *
 * @param db The trace database, in the transaction that records the export.
 * @param manifest The export's ID, and its runs with the events and lines of each.
 * @example
 * ```ts
 * import { insertLineRows } from "./_line_rows.ts";
 * // insertLineRows(trace.db, manifest); // inside recordExport's transaction
 * ```
 */
export function insertLineRows(
  db: DatabaseSync,
  manifest: {
    export_id: string;
    runs: readonly {
      run_id: string;
      events: readonly { seq: number; line_hash: string; lines: number[] }[];
    }[];
  },
): void {
  const sql = (n: number) =>
    `INSERT OR IGNORE INTO trace_export_lines (export_id, line, run_id, seq, line_hash) VALUES ${
      Array(n).fill("(?, ?, ?, ?, ?)").join(", ")
    }`;
  const many = db.prepare(sql(ROWS_PER_INSERT));
  const id = manifest.export_id;
  let values: SQLInputValue[] = [];
  for (const run of manifest.runs) {
    for (const e of run.events) {
      for (const line of e.lines) {
        values.push(id, line, run.run_id, e.seq, e.line_hash);
        if (values.length === ROWS_PER_INSERT * 5) {
          many.run(...values);
          values = [];
        }
      }
    }
  }
  if (values.length) db.prepare(sql(values.length / 5)).run(...values);
}
