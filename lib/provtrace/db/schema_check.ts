/**
 * The check of a trace database's own structure: its tables, views and triggers are exactly those its schema
 * steps make. An edit of the schema changes what every reader sees without touching a row (a view
 * `trace_steps` made again to say something else, a table swapped for a view, a trigger that rewrites rows as
 * the build writes them), so `check` reports it, and the build and the exports refuse such a file. An index
 * of one's own is allowed: it changes how fast a question is answered, never its answer.
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { TRACE_SCHEMA_STEPS } from "./schema.ts";

interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

function objects(db: DatabaseSync): Map<string, SchemaObject> {
  const rows = db.prepare(
    "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
  ).all() as unknown as SchemaObject[];
  return new Map(rows.map((r) => [r.name, r]));
}

let expected: Map<string, SchemaObject> | null = null;

/** What the schema steps make, up to `version`, in a database of their own. */
function expectedObjects(version: number): Map<string, SchemaObject> {
  if (expected !== null && version === TRACE_SCHEMA_STEPS.at(-1)!.version) return expected;
  const db = new DatabaseSync(":memory:");
  try {
    for (const step of TRACE_SCHEMA_STEPS) if (step.version <= version) step.up(db);
    const made = objects(db);
    if (version === TRACE_SCHEMA_STEPS.at(-1)!.version) expected = made;
    return made;
  } finally {
    db.close();
  }
}

/**
 * Compares a trace database's tables, views, triggers and indexes with those its schema version makes.
 *
 * @param db An open trace database.
 * @param version The schema version the file records.
 * @returns One line per difference (none for a file as the build makes it, extra indexes aside).
 * @example
 * ```ts
 * import { openTraceDb, traceSchemaProblems, TRACE_SCHEMA_VERSION } from "./mod.ts";
 * using trace = openTraceDb("/tmp/trace.db", { write: true });
 * traceSchemaProblems(trace.db, TRACE_SCHEMA_VERSION); // []
 * ```
 */
export function traceSchemaProblems(db: DatabaseSync, version: number): string[] {
  const want = expectedObjects(version);
  const have = objects(db);
  const problems: string[] = [];
  for (const [name, w] of want) {
    const h = have.get(name);
    if (h === undefined) problems.push(`the ${w.type} ${name} is missing`);
    else if (h.type !== w.type) problems.push(`${name} is a ${h.type}, not the ${w.type} the schema makes`);
    else if (h.sql !== w.sql) problems.push(`the ${w.type} ${name} is not the one the schema makes`);
  }
  for (const [name, h] of have) {
    if (want.has(name) || h.type === "index") continue;
    problems.push(`the ${h.type} ${name} is not part of a trace database`);
  }
  return problems;
}
