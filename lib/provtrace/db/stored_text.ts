/**
 * Text values whose bytes in the file are not the text a reader of `node:sqlite` gets. SQLite keeps a text as
 * bytes with a length, and a text may hold a NUL or bytes that are not UTF-8; `node:sqlite` reads a text up to
 * its first NUL, and reads bytes that are not UTF-8 as U+FFFD. So a value such as `"yes" || char(0) ||
 * "FORGED"` reads as `yes` here, where the rows are compared with the evidence, and as the whole text in any
 * other reader of the file (Python's sqlite3, DuckDB, a training job's loader). A check that compared only what
 * `node:sqlite` reads would call such a file the same as its sources. Each text is compared here with its
 * bytes (`CAST(value AS BLOB)`), which SQLite gives whole.
 * @module
 */
import type { DatabaseSync } from "node:sqlite";

const encoder = new TextEncoder();

/**
 * The tables and columns of a trace database that hold a text whose bytes are not the text read, one line
 * each: the table, the column, how many values, and the fix.
 *
 * @param db An open trace database.
 * @returns The problems; none for a file the build wrote.
 * @example
 * ```ts
 * import { openTraceDb, storedTextProblems } from "./mod.ts";
 * using trace = openTraceDb("/tmp/trace.db");
 * storedTextProblems(trace.db); // []
 * ```
 */
export function storedTextProblems(db: DatabaseSync): string[] {
  const out: string[] = [];
  const tables = db.prepare(
    "SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'trace\\_%' ESCAPE '\\' ORDER BY name",
  ).all() as { name: string }[];
  for (const { name: table } of tables) {
    const columns = (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[])
      .map((c) => c.name);
    if (columns.length === 0) continue;
    const counts = new Map<string, number>();
    const q = (c: string) => `"${c.replaceAll('"', '""')}"`;
    const select = columns.map((c, i) => `${q(c)} AS v${i}, CAST(${q(c)} AS BLOB) AS b${i}`).join(", ");
    const where = columns.map((c) => `typeof(${q(c)}) = 'text'`).join(" OR ");
    const statement = db.prepare(`SELECT ${select} FROM ${q(table)} WHERE ${where}`);
    for (const row of statement.iterate() as Iterable<Record<string, unknown>>) {
      columns.forEach((column, i) => {
        const value = row[`v${i}`];
        if (typeof value !== "string") return;
        if (!sameBytes(encoder.encode(value), row[`b${i}`] as Uint8Array | null)) {
          counts.set(column, (counts.get(column) ?? 0) + 1);
        }
      });
    }
    for (const [column, n] of counts) {
      out.push(
        `${table}.${column} holds ${n} text${
          n === 1 ? "" : "s"
        } whose bytes are not the text read (a NUL, or bytes that are not UTF-8), which other readers of the file see whole; build again into a new file`,
      );
    }
  }
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array | null): boolean {
  if (b === null) return a.length === 0; // an empty text is an empty blob, which SQLite gives as NULL
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
