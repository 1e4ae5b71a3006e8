/**
 * The rows of a view that has a row for each ref of an event (a run's grants, refusals, inputs), with texts of
 * the event's `data` as its line holds them: SQLite's `json_extract` gives a text with its NUL, which
 * `node:sqlite` cuts there when it reads it. The view's rows come one at a time, and each event's time and line
 * are read once, however many refs its rows give it: a tampered store's event of a 16 MiB line given 200 refs
 * was read as 200 rows of it at once (3.6 GB, 54 s). What the rows hold in all is bounded as a run's text is.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import { EVENT_LINE_MAX_BYTES, parseWeighed } from "../evidence/json_depth.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "../evidence/payload_pack.ts";
import { ROW_TEXT_MAX_BYTES } from "../store/row_reading.ts";
import { columnText } from "../store/store_rows.ts";
import { iterateOnce, preparedOnce } from "./_prepared.ts";
import type { SqlDb } from "./sqlite_rows.ts";

/** An event's time and line, read once for all the rows of its refs. */
const EVENT =
  `SELECT time, CASE WHEN octet_length(line) > ${ROW_TEXT_MAX_BYTES} THEN NULL ELSE line END AS line
  FROM provevi_events WHERE run_id = ? AND seq = ?`;

/**
 * The rows of `sql` (which gives `seq` and the view's own columns, ordered by `seq`), each with the event's
 * `time` and the `fields` of its `data` (a text as a column holds it, null where it has none).
 *
 * @param db The connection.
 * @param runId The run.
 * @param query The query and its parameters.
 * @param fields The fields of `data` each row takes.
 * @returns The rows.
 * @throws ProveviError when an event's line is past the bound of a row, or the rows hold more text than a run.
 */
export function linedRows<T>(
  db: SqlDb,
  runId: string,
  query: { sql: string; params: unknown[] },
  fields: readonly string[],
): T[] {
  const changed = (what: string) =>
    new ProveviError(
      `the store's rows of run "${runId}" ${what}: the store file was changed; restore it from a copy`,
    );
  const out: T[] = [];
  let held = 0;
  let seq: unknown = undefined;
  let event: Record<string, unknown> = {};
  for (const row of iterateOnce(db, query.sql, query.params)) {
    if (row.seq !== seq) {
      seq = row.seq;
      const got = preparedOnce(db, EVENT).get(runId, seq as number) as
        | { time: string; line: string | null }
        | undefined;
      if (got !== undefined && got.line === null) {
        throw changed(`hold an event (seq ${seq}) whose line is longer than ${ROW_TEXT_MAX_BYTES} bytes`);
      }
      held += (got?.line?.length ?? 0) + (got?.time?.length ?? 0);
      event = { time: got?.time ?? null, ...dataOf(got?.line) };
    }
    for (const value of Object.values(row)) if (typeof value === "string") held += value.length;
    if (held > EVIDENCE_TEXT_MAX_BYTES) {
      throw changed(`hold more than the ${EVIDENCE_TEXT_MAX_BYTES} bytes of a run's text`);
    }
    const out1: Record<string, unknown> = { ...row, time: event.time };
    for (const field of fields) out1[field] = event[field] ?? null;
    out.push(out1 as T);
  }
  return out;
}

/** The fields of an event's `data`, each as a column holds it; none for a line that is not JSON. */
function dataOf(line: string | null | undefined): Record<string, unknown> {
  let data: unknown;
  try {
    // an event's line weighs at most 5.5 times its text; one heavier is not a writer's
    data = (parseWeighed(line ?? "{}", 6 * EVENT_LINE_MAX_BYTES) as { data?: unknown }).data;
  } catch { /* the row check reports a line that is not JSON */ }
  if (typeof data !== "object" || data === null || Array.isArray(data)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    // as json_extract gives it: a text, a number, 1 or 0 for true or false, JSON text for the rest
    out[key] = typeof value === "string"
      ? columnText(value)
      : typeof value === "number" || value === null
      ? value
      : typeof value === "boolean"
      ? Number(value)
      : JSON.stringify(value);
  }
  return out;
}
