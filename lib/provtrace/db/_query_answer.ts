/**
 * The answer to one question in SQL, as `provtrace query` gives it: one statement, only reading, every `?`
 * given a value. It runs in a process of its own that the caller stops at its time limit (a SQLite statement
 * in progress cannot be interrupted from JavaScript, nor stopped with its Worker): provtrace in its query role
 * (`query_role.ts`), or this process when the caller gives no limit.
 * @module
 */
import { DatabaseSync } from "node:sqlite";

// node:sqlite's types in Deno 2.9.6 lack setAuthorizer and setReturnArrays, which the process has.
// deno-lint-ignore no-explicit-any
type Db = any;
// deno-lint-ignore no-explicit-any
type Statement = any;

/** What the question is. */
export interface QueryRequest {
  /** The trace database's file. */
  db: string;
  sql: string;
  /** The values of the `?` placeholders, in order. */
  params: string[];
}

/** Where {@linkcode answerQuery} gives its items, and what it does once the file is open. */
export interface AnswerOptions {
  /** Called with each item, in order. */
  emit: (item: unknown) => void;
  /** Called once the file is open, before the statement is prepared (the query role gives up its permissions). */
  opened?: () => void;
}

/**
 * Answers a question: emits `{ columns }`, then each row as a list of values in the columns' order. A blob is
 * `{ blob: hex }` and a number JSON cannot hold is `{ number: "Infinity" }`, so each item is JSON.
 *
 * @param request The file, the statement and its parameters' values.
 * @param options Where the items go, and what runs once the file is open.
 * @throws Error with a one-line message for a statement that cannot be answered: SQLite's own error; or, named
 * `QueryRefused` (a message that says its fix by itself), more than one statement, a statement that would do
 * more than read, a placeholder without a value or a value without a placeholder, a named placeholder.
 */
export function answerQuery(request: QueryRequest, options: AnswerOptions): void {
  const { emit } = options;
  const db: Db = new DatabaseSync(request.db, { readOnly: true });
  try {
    options.opened?.();
    onlyReading(db);
    const statement = oneStatement(db, request.sql);
    checkPlaceholders(db, statement, request.params);
    emit({ columns: statement.columns().map((c: { name: string }) => c.name) });
    statement.setReturnArrays(true);
    for (const row of statement.iterate(...request.params) as Iterable<unknown[]>) {
      emit(
        row.map((v) =>
          v instanceof Uint8Array
            ? { blob: Array.from(v, (b) => b.toString(16).padStart(2, "0")).join("") }
            : typeof v === "number" && !Number.isFinite(v)
            ? { number: String(v) }
            : v
        ),
      );
    }
  } finally {
    db.close();
  }
}

/**
 * Lets the connection only read: a SELECT, the tables and functions it reads, recursion, and the pragmas
 * that describe the schema. ATTACH, VACUUM INTO, a transaction or any write is refused before it runs.
 */
export function onlyReading(db: Db): void {
  const READ = 20, SELECT = 21, FUNCTION = 31, RECURSIVE = 33, PRAGMA = 19;
  const PRAGMAS = ["table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo"];
  db.setAuthorizer((code: number, name: string | null) =>
    code === READ || code === SELECT || code === FUNCTION || code === RECURSIVE ||
      (code === PRAGMA && PRAGMAS.includes(String(name).toLowerCase()))
      ? 0
      : 1
  );
}

/** Prepares the one statement of the SQL; more than one, or none, is an error, as is SQLite's own. */
export function oneStatement(db: Db, sql: string): Statement {
  const refused = (message: string) => Object.assign(new Error(message), { name: "QueryRefused" });
  const bare = (text: string) => text.replace(/--[^\n]*(\n|$)|\/\*[\s\S]*?(\*\/|$)|[\s;]/g, "");
  // Deno 2.9.6's node:sqlite crashes the process on any use of a statement prepared from no SQL (tried).
  if (bare(sql) === "") throw refused("the SQL holds no statement");
  let statement;
  try {
    statement = db.prepare(sql);
  } catch (error) {
    const message = String((error as Error).message).split("\n")[0]!;
    if (!/not authorized|authorization denied/.test(message)) throw new Error(message);
    throw refused("the statement does more than read (a query may only SELECT, on a read-only connection)");
  }
  const first: string = statement.sourceSQL ?? "";
  if (bare(sql.startsWith(first) ? sql.slice(first.length) : "") !== "") {
    throw refused("the SQL holds more than one statement; give one statement at a time");
  }
  // Every question has columns; a statement without any (VACUUM INTO, whose write the authorizer sees only
  // as it runs) is not one.
  if (statement.columns().length === 0) {
    throw refused("the statement does more than read (a query may only SELECT, on a read-only connection)");
  }
  return statement;
}

/** Every placeholder has its value and every value its placeholder; a named placeholder is refused. */
export function checkPlaceholders(db: Db, statement: Statement, given: string[]): void {
  const refused = (message: string) => Object.assign(new Error(message), { name: "QueryRefused" });
  // Binding one more value than the positional placeholders take fails at once, before any step runs.
  const outOfRange = (values: unknown[]) => {
    try {
      statement.iterate(...values);
      return false;
    } catch (error) {
      if (/column index out of range/.test(String((error as Error).message))) return true;
      throw error;
    }
  };
  const wrong = (count: number) =>
    refused(
      `the statement has ${count || "no"} placeholder${
        count === 1 ? "" : "s"
      } (?), and ${given.length} value${
        given.length === 1 ? " was" : "s were"
      } given: give one value for each, in order`,
    );
  if (outOfRange(given)) {
    let count = given.length - 1;
    while (count > 0 && outOfRange(given.slice(0, count))) count--;
    throw wrong(count);
  }
  if (!outOfRange([...given, null])) {
    let count = given.length + 1;
    while (count < 32766 && !outOfRange([...given, ...Array(count + 1 - given.length).fill(null)])) count++;
    throw wrong(count);
  }
  // A named placeholder takes a number too, which the positional count does not see.
  let numbered = 0;
  try {
    for (const op of db.prepare(`EXPLAIN ${statement.sourceSQL}`).all() as { opcode: string; p1: number }[]) {
      if (op.opcode === "Variable") numbered = Math.max(numbered, op.p1);
    }
  } catch { /* a statement that cannot be explained (an EXPLAIN itself) has none to find */ }
  if (numbered > given.length) {
    throw refused(
      "the statement has a named placeholder (:name, @name or $name): use ? and give values in order",
    );
  }
}
