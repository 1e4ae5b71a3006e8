/**
 * The rows of a view that has a row for each ref of an event (a run's grants, refusals, inputs), as the postgres
 * store reads them: the refs' rows one at a time, and each event's time and texts of its `data` once, however
 * many refs its rows give it (the view repeats them on each row: a tampered store's event of a 16 MiB text given
 * 200 refs would be read as 200 rows of it at once). What the rows hold in all is bounded as a run's text is,
 * as the sqlite store's reading (`../sqlite/_lined_rows.ts`) bounds it.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "../evidence/payload_pack.ts";
import { ROW_TEXT_MAX_BYTES } from "../store/row_reading.ts";
import type { RowSource } from "../store/row_check.ts";

/**
 * The rows of `refs` (a query of `seq` and the view's own columns, ordered by `seq`, with the run's ID as its
 * parameters), each with the columns `event` gives for its seq (a query of one row, its parameters the run's ID
 * and the seq, each `?` of it).
 *
 * @param db The store.
 * @param runId The run.
 * @param sql The two queries, and the columns of the second.
 * @returns The rows.
 * @throws ProveviError when an event's texts are past the bound of a row, or the rows hold more than a run.
 */
export async function eventRows<T>(
  db: RowSource,
  runId: string,
  sql: { refs: string; refsParams: number; event: string; eventParams: number; columns: readonly string[] },
): Promise<T[]> {
  const changed = (what: string) =>
    new ProveviError(
      `the store's rows of run "${runId}" ${what}: the store's rows were changed; restore them from a copy`,
    );
  const width = sql.columns.map((c) => `coalesce(octet_length(${c}), 0)`).join(" + ");
  const event = `SELECT ${
    sql.columns.map((c) => `CASE WHEN w > ${ROW_TEXT_MAX_BYTES} THEN NULL ELSE ${c} END AS ${c}`).join(", ")
  }, w FROM (SELECT ${sql.columns.join(", ")}, ${width} AS w FROM (${sql.event}) e LIMIT 1) x`;
  // the refs' rows first, then each event's: a query while a cursor is open would wait for a second
  // connection, which a store of one never has
  const refs: Record<string, unknown>[] = [];
  let held = 0;
  const rows = (db.eachWide ?? db.each).call(db, sql.refs, ...Array(sql.refsParams).fill(runId));
  for await (const row of rows) {
    for (const value of Object.values(row)) if (typeof value === "string") held += value.length;
    if (held > EVIDENCE_TEXT_MAX_BYTES) {
      throw changed(`hold more than the ${EVIDENCE_TEXT_MAX_BYTES} bytes of a run's text`);
    }
    refs.push(row);
  }
  const out: T[] = [];
  let seq: unknown = undefined;
  let values: Record<string, unknown> = {};
  for (const row of refs) {
    if (String(row.seq) !== String(seq)) {
      seq = row.seq;
      const params = Array.from({ length: sql.eventParams }, (_, i) => (i % 2 === 0 ? runId : String(seq)));
      const [got] = await db.all(event, ...params);
      if (got !== undefined && Number(got.w) > ROW_TEXT_MAX_BYTES) {
        throw changed(`hold an event (seq ${seq}) whose texts are longer than ${ROW_TEXT_MAX_BYTES} bytes`);
      }
      held += Number(got?.w ?? 0);
      if (held > EVIDENCE_TEXT_MAX_BYTES) {
        throw changed(`hold more than the ${EVIDENCE_TEXT_MAX_BYTES} bytes of a run's text`);
      }
      values = Object.fromEntries(sql.columns.map((c) => [c, got?.[c] ?? null]));
    }
    out.push({ ...row, ...values } as T);
  }
  return out;
}
