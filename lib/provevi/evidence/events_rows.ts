/**
 * The text of `events.jsonl` made of a store's rows (sqlite, postgres), held to the bounds of the file store's
 * reading of the file (`events_file.ts`): a row's line past {@linkcode EVENT_LINE_MAX_BYTES} is refused by its
 * size, before its text leaves the store, and the text stops at the 512 MiB a file may hold. The rows come
 * {@linkcode BATCH} at a time, joined by the store: one object a row cost more than their text (a tampered
 * store of two million empty lines took 300 MiB, and a row of 100 MiB was read whole, as the rest).
 * @module
 */
import { EVENT_LINE_MAX_BYTES } from "./json_depth.ts";
import { IrregularFile, tooBig } from "./open_file.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "./payload_pack.ts";

/** The lines a row of {@linkcode eventLinesQuery} joins. */
export const BATCH = 4096;

/**
 * The query of a run's lines, {@linkcode BATCH} to a row, in seq order: `n` lines, `size` (their bytes), `wide`
 * (the first line past the bound, counted from the run's first, or null), and `lines` joined by newlines, null
 * when one is too wide (its text is not sent). One query read as it comes (a cursor): a query a batch, after the
 * last seq, took 20 s for two million rows a server had no statistics of yet.
 *
 * @param dialect The store's SQL: the two differ only in the function that joins texts, and the placeholder.
 * @returns The query; its parameter is the run ID.
 */
export function eventLinesQuery(dialect: "sqlite" | "postgres"): string {
  const [run, join] = dialect === "sqlite"
    ? ["?1", "group_concat(coalesce(line, ''), char(10) ORDER BY i)"]
    : ["$1", "string_agg(coalesce(line, ''), E'\\n' ORDER BY i)"];
  return `SELECT count(*) AS n, sum(octet_length(line)) AS size,
      min(CASE WHEN octet_length(line) > ${EVENT_LINE_MAX_BYTES} THEN i END) AS wide,
      CASE WHEN max(octet_length(line)) <= ${EVENT_LINE_MAX_BYTES} OR max(octet_length(line)) IS NULL
        THEN ${join} END AS lines
    FROM (SELECT line, row_number() OVER (ORDER BY seq) AS i FROM provevi_events WHERE run_id = ${run}) AS rows
    GROUP BY (i - 1) / ${BATCH} ORDER BY (i - 1) / ${BATCH}`;
}

/**
 * The row of {@linkcode eventLinesQuery} (`n`, `last`, `size`, `wide`, `lines`), as a store's driver gives it:
 * numbers may be text, or bigints.
 */
export type EventLinesRow = Record<string, unknown>;

/**
 * The text of a run's rows, each line and a newline.
 *
 * @param where What the rows are, for the error (`store URI run ID`).
 * @param rows The rows of {@linkcode eventLinesQuery}, as they come.
 * @returns The text.
 * @throws IrregularFile naming the first line past {@linkcode EVENT_LINE_MAX_BYTES}, or once the text passes
 *   the 512 MiB a reader takes of `events.jsonl`.
 * @example
 * ```ts
 * import { eventsTextOfRows } from "./events_rows.ts";
 * const text = await eventsTextOfRows("a store run r", [{ n: 1, size: 2, wide: null, lines: "{}" }]);
 * ```
 */
export async function eventsTextOfRows(
  where: string,
  rows: Iterable<EventLinesRow> | AsyncIterable<EventLinesRow>,
): Promise<string> {
  const chunks: string[] = [];
  let bytes = 0;
  for await (const row of rows) {
    const n = Number(row.n ?? 0);
    if (row.wide !== null && row.wide !== undefined) {
      throw new IrregularFile(
        where,
        `line ${
          Number(row.wide)
        } holds more than ${EVENT_LINE_MAX_BYTES} bytes, more than any line of it may`,
      );
    }
    bytes += Number(row.size ?? 0) + n;
    if (bytes > EVIDENCE_TEXT_MAX_BYTES) {
      throw tooBig(where, `more than ${EVIDENCE_TEXT_MAX_BYTES}`, EVIDENCE_TEXT_MAX_BYTES);
    }
    // a batch whose lines are not text (a tampered column) reads as empty lines: not events, as its bytes are not
    chunks.push(typeof row.lines === "string" ? `${row.lines}\n` : "\n".repeat(n));
  }
  return chunks.join("");
}
