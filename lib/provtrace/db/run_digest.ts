/**
 * The digest of one run's rows in a trace database: every row the run owns, in every table, in one fixed order,
 * hashed with SHA-256. The build keeps it in `trace_sources.rows_digest`; `check` and every export compute it
 * again from the file and from the rows that the run's evidence gives (the same build into an in-memory
 * database), and name the first row that differs.
 *
 * Its text (format 2) is each value as SQLite gives it, typed and length-prefixed, so that a text is hashed as it
 * was read and not written again as JSON (which an export of 100,000 calls did to 50 MB of span attributes and
 * messages, for most of its check): per table, a line `TABLE<tab>COLUMNS` (the names, joined by commas); per
 * row, in key order, each column's value, then a newline: a text as `s`, its length in UTF-16 code units, `:`
 * and the text (one that is not well formed UTF-16 as `u` and its JSON); null as `z`; a number as `n`, its
 * JSON text (or `Infinity`, `NaN`) and `;`; a blob as `b`, its hex and `;`; a big integer as `i`, its digits
 * and `;`. Each value's text ends where its own prefix says, so two different sets of rows never give one
 * text. Files built by provtrace before format 2 kept the RFC 8785 digest ({@linkcode TraceRunDigest}'s
 * `canonical`): a check tries it when the format 2 digest does not match, so those files are not built again.
 *
 * The digest kept in the file only tells rows changed after the build from a source that changed: whoever can
 * edit the file can rewrite a run's rows and its digest together. What no edit of the file can forge is the
 * comparison with the rows made again from the store's evidence, which `check` and the exports always make.
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import canonicalize from "canonicalize";
import { createHash } from "node:crypto";

/** One table's part of a run's rows: the columns that name a row, and the rows to select. */
interface DigestTable {
  table: string;
  key: readonly string[];
  /** The columns, when not all of them. */
  columns?: string;
  /** The condition that selects the run's rows (`?` is the run ID). */
  where?: string;
}

/**
 * The tables, in the digest's order. A source keeps only what its evidence decides: not when it was built,
 * which build made it, the digest itself, or the wording of an unverified run's problems.
 * A message belongs to every run whose calls link to it.
 */
const TABLES: readonly DigestTable[] = [
  { table: "trace_sources", key: ["run_id"], columns: "run_id, store_uri, runs_root, last_hash, verified" },
  { table: "trace_runs", key: ["run_id"] },
  { table: "trace_spans", key: ["span_id"] },
  { table: "trace_model_calls", key: ["span_id"] },
  { table: "trace_tokens", key: ["span_id"] },
  { table: "trace_call_messages", key: ["span_id", "direction", "position"] },
  {
    table: "trace_messages",
    key: ["hash"],
    where: "hash IN (SELECT message_hash FROM trace_call_messages WHERE run_id = ?)",
  },
  { table: "trace_tool_calls", key: ["call_id"] },
  { table: "trace_access", key: ["seq", "uri"] },
  { table: "trace_assessments", key: ["n"] },
];

/** The rows of one run, each by its table and key, and their digest. */
export interface TraceRunDigest {
  /** The lowercase hex SHA-256 of the rows, in order (format 2: each value typed and length-prefixed). */
  digest: string;
  /**
   * The digest of provtrace before format 2: the SHA-256 of each row as `table [key…]`, a tab, its RFC 8785
   * JSON and a newline, in the same order. Made when asked for, from the rows already read.
   */
  readonly canonical: string;
  /** `table [key…]` → the row's canonical JSON, in the digest's order; made when asked for. */
  rows: Map<string, string>;
}

/** One table's rows of a run as its digest read them: the column names, and each row's values in that order. */
export interface TraceRunTable {
  names: readonly string[];
  rows: readonly (readonly unknown[])[];
}

/** A run's rows as read for its digest, by table name, each table's rows in its key's order. */
export type TraceRunTables = ReadonlyMap<string, TraceRunTable>;

/**
 * Reads a run's rows from a trace database and computes their digest.
 *
 * @param db An open trace database (a file, or the in-memory one a check builds from the source).
 * @param runId The run.
 * @param options `tables`: takes the rows just read, by table, so that a caller that checks the digest and
 * then uses the rows (an export) reads them once.
 * @returns The digest and the rows it covers.
 * @example
 * ```ts
 * import { openTraceDb, traceRunDigest } from "./mod.ts";
 * using trace = openTraceDb("/tmp/trace.db", { write: true });
 * traceRunDigest(trace.db, "run-20261129T120000Z-0badc0de").digest; // 64 hex digits
 * ```
 */
export function traceRunDigest(
  db: DatabaseSync,
  runId: string,
  options: { tables?: (tables: TraceRunTables) => void } = {},
): TraceRunDigest {
  const read = readRunRows(db, runId);
  options.tables?.(read.tables);
  return runDigestOf(read);
}

/** A run's rows as a digest reads them: by table, in the digest's order, each row an array of its values. */
export interface TraceRunRows {
  /** Each table's column names, in the digest's order of tables. */
  names: readonly (readonly string[])[];
  /** Each table's rows, in the digest's order of tables, each table's in its key's order. */
  rows: readonly (readonly (readonly unknown[])[])[];
  /** The same rows by table name, as {@linkcode traceRunDigest}'s `tables` gives them. */
  tables: TraceRunTables;
}

/**
 * Reads a run's rows for its digest, without hashing them: {@linkcode runDigestText}'s hash can then be made
 * elsewhere (an export hashes run k on a worker while it reads run k + 1).
 *
 * @param db An open trace database.
 * @param runId The run.
 * @returns The rows, by table.
 */
export function readRunRows(db: DatabaseSync, runId: string): TraceRunRows {
  const statements = statementsOf(db);
  const rows = statements.map((s) => s.statement.all(runId) as unknown as unknown[][]);
  const names = statements.map((s) => s.names);
  return {
    names,
    rows,
    tables: new Map(TABLES.map((t, i) => [t.table, { names: names[i]!, rows: rows[i]! }])),
  };
}

/** The tables that an export's lines are made of (`CallReader`), of a run's rows. */
/**
 * The tables that an export's lines are made of (`CallReader`), each with the columns the lines use when not all
 * of them: the spans' attributes, the messages' plain text (their content holds it) and the run ID of every
 * message of every call are most of a run's bytes, and the lines use none of them.
 */
const LINE_TABLES = new Map<string, string | null>([
  ["trace_sources", "run_id, store_uri, last_hash, verified"],
  ["trace_runs", null],
  ["trace_spans", "span_id, seq, line_hash, end_time"],
  ["trace_model_calls", null],
  ["trace_tokens", null],
  ["trace_call_messages", "span_id, direction, message, message_hash"],
  ["trace_messages", "hash, content"],
  ["trace_tool_calls", null],
  ["trace_assessments", null],
]);

/**
 * The rows of a run that an export's lines are made of, read as the digest reads them (by table, each in its
 * key's order), with only the columns the lines use: for an export whose check hashed the run's rows elsewhere
 * (a worker, in the same snapshot), so that this thread reads nothing the lines do not use.
 *
 * @param db An open trace database.
 * @param runId The run.
 * @returns The tables, as {@linkcode traceRunDigest}'s `tables` would give them, some with fewer columns.
 */
export function readLineTables(db: DatabaseSync, runId: string): TraceRunTables {
  const statements = statementsOf(db);
  let narrow = lineStatements.get(db);
  if (narrow === undefined) {
    narrow = new Map();
    for (const [i, t] of TABLES.entries()) {
      if (!LINE_TABLES.has(t.table)) continue;
      const columns = LINE_TABLES.get(t.table);
      if (columns === null) {
        narrow.set(t.table, statements[i]!);
        continue;
      }
      const statement = db.prepare(
        `SELECT ${columns} FROM ${t.table} WHERE ${t.where ?? "run_id = ?"} ORDER BY ${t.key.join(", ")}`,
      );
      (statement as unknown as { setReturnArrays(on: boolean): void }).setReturnArrays(true);
      narrow.set(t.table, { statement, names: columns!.split(", ") });
    }
    lineStatements.set(db, narrow);
  }
  const out = new Map<string, TraceRunTable>();
  for (const [table, { statement, names }] of narrow) {
    out.set(table, { names, rows: statement.all(runId) as unknown as unknown[][] });
  }
  return out;
}

/**
 * The tables an export's lines are made of, taken from a run's rows as {@linkcode readRunRows} read them, with
 * the columns {@linkcode readLineTables} reads: a worker that hashed the rows gives these with their digest, so
 * that the lines are made of the very rows that were hashed, not of a second read of the file.
 *
 * @param tables The run's rows as read for its digest.
 * @returns The line tables, some with fewer columns.
 */
export function lineTablesOf(tables: TraceRunTables): TraceRunTables {
  const out = new Map<string, TraceRunTable>();
  for (const [table, columns] of LINE_TABLES) {
    const found = tables.get(table);
    if (found === undefined) continue;
    if (columns === null) {
      out.set(table, found);
      continue;
    }
    const names = columns.split(", ");
    const at = names.map((n) => found.names.indexOf(n));
    out.set(table, { names, rows: found.rows.map((row) => at.map((i) => row[i])) });
  }
  return out;
}

const lineStatements = new WeakMap<
  DatabaseSync,
  Map<string, { statement: StatementSync; names: readonly string[] }>
>();

/**
 * The format 2 digest of a run's rows read by {@linkcode readRunRows} (hex SHA-256); it needs only the names
 * and the rows, so a worker given a copy of them gives the same digest.
 *
 * @param read The rows' column names and values, by table in the digest's order.
 * @returns 64 hex digits.
 */
export function runDigestText(read: Pick<TraceRunRows, "names" | "rows">): string {
  const hash = createHash("sha256");
  // Values are hashed a chunk at a time, not each alone (and the run's rows are never joined into one text).
  let chunk = "";
  for (const [i, t] of TABLES.entries()) {
    chunk += `${t.table}\t${read.names[i]!.join(",")}\n`;
    for (const values of read.rows[i]!) {
      for (const v of values) {
        if (typeof v === "string") chunk += v.isWellFormed() ? `s${v.length}:${v}` : `u${JSON.stringify(v)}`;
        else if (v === null) chunk += "z";
        else chunk += valueText(v);
      }
      chunk += "\n";
      if (chunk.length >= 1 << 16) {
        hash.update(chunk);
        chunk = "";
      }
    }
  }
  hash.update(chunk);
  return hash.digest("hex");
}

/** The digest of rows read by {@linkcode readRunRows}. */
function runDigestOf(read: TraceRunRows): TraceRunDigest {
  let named: { canonical: string; rows: Map<string, string> } | null = null;
  const canonical = () =>
    named ??= canonicalRows(read.names.map((names, i) => shapeOf(TABLES[i]!, names)), read.rows);
  return {
    digest: runDigestText(read),
    // Only a file built before format 2, or a comparison that found a difference, needs these.
    get canonical() {
      return canonical().canonical;
    },
    get rows() {
      return canonical().rows;
    },
  };
}

/** The format 2 text of a value that is not a text or null. */
function valueText(v: unknown): string {
  if (typeof v === "number") return `n${v};`; // a finite number's JSON is its String(); Infinity and NaN as named
  if (v instanceof Uint8Array) return `b${Array.from(v, (b) => b.toString(16).padStart(2, "0")).join("")};`;
  if (typeof v === "bigint") return `i${v};`;
  throw new TypeError(
    `a trace database gave a value of type ${typeof v}, which a run's digest does not know`,
  );
}

/** The rows of a run by name, each as its RFC 8785 JSON, and the digest of provtrace before format 2. */
function canonicalRows(
  statements: readonly DigestShape[],
  read: readonly (readonly (readonly unknown[])[])[],
): { canonical: string; rows: Map<string, string> } {
  const rows = new Map<string, string>();
  const hash = createHash("sha256");
  let chunk = "";
  for (const [i, t] of TABLES.entries()) {
    const table = statements[i]!;
    for (const values of read[i]!) {
      const text = rowText(table, values);
      const base = `${t.table} ${keyText(table, values)}`;
      // A file whose keys were made not unique (its table made again) still names each of its rows.
      let name = base;
      for (let n = 2; rows.has(name); n++) name = `${base} (row ${n} of that key)`;
      rows.set(name, text);
      chunk += `${name}\t${text}\n`;
      if (chunk.length >= 1 << 16) {
        hash.update(chunk);
        chunk = "";
      }
    }
  }
  hash.update(chunk);
  return { canonical: hash.digest("hex"), rows };
}

/** Where a table's columns are in the rows its statement gives. */
interface DigestShape {
  /** The positions of the key's columns. */
  key: number[];
  /** The positions of the columns in RFC 8785 order (by UTF-16 code unit), each with its name. */
  sorted: { at: number; name: string }[];
  /** The column names, in the statement's order. */
  names: readonly string[];
  /**
   * Whether an object with the columns as keys, made in `sorted`'s order, keeps that order: not for a name that
   * is an array index (an object puts those first) or `__proto__` (a file's table made again could have one).
   */
  ordered: boolean;
}

/** A table's statement, prepared once per database, and where its columns are in the rows it gives. */
interface DigestStatement extends DigestShape {
  /** Gives each row as an array of its columns' values. */
  statement: StatementSync;
  names: string[];
}

/** Where a table's columns are, from their names. */
function shapeOf(t: DigestTable, names: readonly string[]): DigestShape {
  const sorted = names.map((name, at) => ({ at, name }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const ordered = names.every((n) => !/^(0|[1-9][0-9]*)$/.test(n) && n !== "__proto__");
  return { key: t.key.map((k) => names.indexOf(k)), sorted, names, ordered };
}

/**
 * The tables' statements on a database, prepared once: an export checks thousands of runs on one connection, and
 * preparing ten statements for each was a good part of its time.
 */
const prepared = new WeakMap<DatabaseSync, DigestStatement[]>();

function statementsOf(db: DatabaseSync): DigestStatement[] {
  let statements = prepared.get(db);
  if (statements === undefined) {
    statements = TABLES.map((t) => {
      const statement = db.prepare(
        `SELECT ${t.columns ?? "*"} FROM ${t.table} WHERE ${t.where ?? "run_id = ?"} ORDER BY ${
          t.key.join(", ")
        }`,
      );
      // Arrays, not an object per row: the names are the same for every row, and sorted once here.
      (statement as unknown as { setReturnArrays(on: boolean): void }).setReturnArrays(true);
      const names = (statement.columns() as { name: string }[]).map((c) => c.name);
      return { ...shapeOf(t, names), statement, names };
    });
    prepared.set(db, statements);
  }
  return statements;
}

/**
 * The RFC 8785 JSON of a row given as its values: {@linkcode flatCanonical} of the row as an object. A row of
 * text, finite numbers and nulls (nearly every row) is made as an object whose keys are in RFC 8785's order
 * and written by one JSON.stringify, which is RFC 8785's text for it: a text that is not well formed UTF-16 is
 * the one difference, and JSON.stringify writes its lone surrogate as `\ud8xx`…`\udfxx`, so a text holding
 * `\ud` goes the value-by-value way, as does a row with any other value.
 */
function rowText(table: DigestShape, values: readonly unknown[]): string {
  const slow = () => flatCanonical(plain(Object.fromEntries(table.names.map((n, i) => [n, values[i]]))));
  if (!table.ordered) return slow();
  const row: Record<string, unknown> = {};
  for (const { at, name } of table.sorted) {
    const v = values[at];
    if (!plainType(v)) return slow();
    row[name] = v;
  }
  const text = JSON.stringify(row);
  return text.includes("\\ud") ? slow() : text;
}

/**
 * The RFC 8785 JSON of a row whose values are text, finite numbers, booleans or null: its keys sorted by UTF-16
 * code unit, each value as JSON.stringify writes it, which is what RFC 8785 asks of those values. Anything
 * else (a blob's object, a lone surrogate, a number JSON cannot hold) goes to the full canonicalization, which
 * gives the same text or the same refusal.
 */
function flatCanonical(row: Record<string, unknown>): string {
  const keys = Object.keys(row).sort();
  const parts: string[] = [];
  for (const k of keys) {
    const v = row[k];
    if (v === undefined) continue;
    if (!simple(v)) return canonicalize(row)!;
    parts.push(`${JSON.stringify(k)}:${JSON.stringify(v)}`);
  }
  return `{${parts.join(",")}}`;
}

/** The RFC 8785 JSON of a row's key, an array of its values (as {@linkcode rowText} does a row). */
function keyText(table: DigestShape, row: readonly unknown[]): string {
  const values = table.key.map((k) => row[k] ?? null);
  if (values.every(plainType)) {
    const text = JSON.stringify(values);
    if (!text.includes("\\ud")) return text;
  }
  const plainValues = values.map(plainValue);
  return plainValues.every(simple)
    ? `[${plainValues.map((v) => JSON.stringify(v)).join(",")}]`
    : canonicalize(plainValues)!;
}

/** True for a value JSON.stringify writes as RFC 8785 does, when it is text that is well formed. */
function plainType(v: unknown): boolean {
  return v === null || typeof v === "string" || (typeof v === "number" && Number.isFinite(v)) ||
    typeof v === "boolean";
}

/** True for a value whose RFC 8785 JSON is JSON.stringify's. */
function simple(v: unknown): boolean {
  return v === null || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v)) ||
    (typeof v === "string" && v.isWellFormed());
}

/**
 * The first row where two sets of a run's rows differ, in one line: the table, the row's key, and the
 * columns that differ; or null when they are the same.
 *
 * @param found The rows as the trace database holds them.
 * @param expected The rows as the run's evidence gives them.
 * @returns Such as `trace_messages ["3f2a…"]: text, content differ (and 2 more rows)`.
 * @example
 * ```ts
 * import { rowDifference, traceRunDigest } from "./run_digest.ts";
 * // rowDifference(traceRunDigest(file, id), traceRunDigest(rebuilt, id));
 * ```
 */
export function rowDifference(found: TraceRunDigest, expected: TraceRunDigest): string | null {
  if (found.digest === expected.digest) return null;
  const differ: string[] = [];
  for (const [name, text] of found.rows) {
    const other = expected.rows.get(name);
    if (other === undefined) differ.push(`${name}: a row the run's evidence does not give`);
    else if (other !== text) differ.push(`${name}: ${changedColumns(text, other).join(", ")} differ`);
  }
  for (const name of expected.rows.keys()) {
    if (!found.rows.has(name)) differ.push(`${name}: missing (the run's evidence gives it)`);
  }
  if (differ.length === 0) return "the rows are in another order"; // not reached: each key is unique
  const more = differ.length - 1;
  return `${differ[0]}${more ? ` (and ${more} more row${more === 1 ? "" : "s"})` : ""}`;
}

function changedColumns(a: string, b: string): string[] {
  const x = JSON.parse(a) as Record<string, unknown>;
  const y = JSON.parse(b) as Record<string, unknown>;
  const names = [...new Set([...Object.keys(x), ...Object.keys(y)])];
  return names.filter((n) => canonicalize(x[n] ?? null) !== canonicalize(y[n] ?? null));
}

/** A row's values as JSON can hold them: a blob (put where text belongs) as its hex, so it still differs. */
function plain(row: Record<string, unknown>): Record<string, unknown> {
  let kept = true;
  for (const k in row) {
    const v = row[k];
    if (v instanceof Uint8Array || typeof v === "bigint") kept = false;
  }
  if (kept) return row; // most rows: text, numbers and nulls as they are
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = plainValue(v);
  return out;
}

function plainValue(v: unknown): unknown {
  return v instanceof Uint8Array
    ? { blob: Array.from(v, (b) => b.toString(16).padStart(2, "0")).join("") }
    : typeof v === "bigint"
    ? String(v)
    : v;
}
