/**
 * The rows an indexed store lacks for a run whose folder was sealed while the store could not take them: the
 * server was away (a restart during a payload's or an event's write, or at the seal), or the writer was killed
 * between the folder's seal and the row's. The folder is the record and the rows its index, so the rows are
 * completed from the folder, and only from a folder whose evidence verifies and whose lines the rows already
 * hold as a prefix: rows that disagree with the folder are for the check to report, never to overwrite.
 * @module
 */
import { parseWeighed } from "../evidence/json_depth.ts";
import { packedPayloads, payloadPlace } from "../evidence/payload_pack.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import type { Manifest, PayloadEntry } from "../evidence/manifest.ts";
import { verifyEvidence } from "../evidence/verify.ts";
import { FileRunRecord } from "./file_store.ts";
import { type SealRow, sealRow } from "./store_rows.ts";
import { boundedRows, RowProblems, type RowSource } from "./row_reading.ts";

/** The rows to add, all of them in one transaction, and only while the run's row is still unsealed. */
export interface MissingRows {
  /** The seq of the first event to add: the number of event rows held. */
  from: number;
  /** The events to add, from `from` on, with their lines. */
  events: { event: EvidenceEvent; line: string }[];
  /** The payloads to add, each with its place in the run folder. */
  payloads: (PayloadEntry & { place: string })[];
  /** The seal's columns of the run's row. */
  seal: SealRow;
}

/**
 * The rows a store lacks for a sealed run, from its folder: null unless the folder's evidence verifies (its
 * chain, sequence, payloads and manifest) and the rows held are its lines from seq 0 with no hole and no
 * line changed, and its payload rows are payloads of its manifest with their sizes. The rows held are read as
 * they come, no more than the folder's lines and payloads (`row_reading.ts`): a store holding more, or a text
 * wider than a line, is not completed, and the check says why.
 *
 * @param runId The run.
 * @param folder The run folder that the run's row records.
 * @param db The store's rows.
 * @returns The rows to add (possibly none but the seal's columns), or null.
 * @example
 * ```ts
 * import { missingRows } from "./complete_rows.ts";
 * // a store that holds no row of the run
 * const none = { all: () => Promise.resolve([]), each: () => [] };
 * const rows = await missingRows("run-x", "/tmp/runs/run-x", none);
 * ```
 */
export async function missingRows(
  runId: string,
  folder: string,
  db: RowSource,
): Promise<MissingRows | null> {
  let read;
  try {
    read = await verifyEvidence(new FileRunRecord(runId, folder));
  } catch {
    return null;
  }
  const manifestText = read.texts?.manifest ?? null;
  if (read.problems.length > 0 || !read.complete || manifestText === null) return null;
  const lines = read.lines;
  // Any problem of the reading (more rows than the folder's, a text too wide) leaves the rows as they are.
  const problems = new RowProblems(runId);
  const held = (table: string, columns: string[], most: number) =>
    boundedRows(
      db,
      {
        table,
        columns,
        texts: columns.filter((c) => c !== "seq" && c !== "size"),
        where: "run_id = ?",
        params: [runId],
        order: columns[0],
        most,
        implied: "its folder",
        code: "rows.unsealed",
        key: () => table,
      },
      problems,
      runId,
    );
  // The rows' seqs are distinct (the table's key), each a line's: n of them, the last n - 1, are 0 to n - 1.
  let from = 0, last = -1;
  for await (const row of held("provevi_events", ["seq", "line"], lines.length)) {
    from++;
    last = Math.max(last, Number(row.seq));
    if (lines[Number(row.seq)] !== row.line) return null;
  }
  if (problems.list.length || last !== from - 1) return null;
  const manifest = parseWeighed(manifestText) as Manifest;
  const sizes = new Map(manifest.payloads.map((p) => [p.sha256, p.size]));
  const payloads = new Set<string>();
  for await (const row of held("provevi_payloads", ["sha256", "size"], sizes.size)) {
    const sha256 = String(row.sha256);
    if (sizes.get(sha256) !== Number(row.size)) return null;
    payloads.add(sha256);
  }
  if (problems.list.length) return null;
  return {
    from,
    events: read.events.slice(from).map((event, i) => ({ event, line: lines[from + i]! })),
    payloads: await placed(folder, manifest.payloads.filter((p) => !payloads.has(p.sha256))),
    seal: sealRow(manifestText, manifest, read.events.at(-1) ?? null),
  };
}

/** The payloads with their places: in the run's pack, or each a file. */
async function placed(
  folder: string,
  payloads: PayloadEntry[],
): Promise<(PayloadEntry & { place: string })[]> {
  const packed = await packedPayloads(folder);
  return payloads.map((p) => ({ ...p, place: payloadPlace(p.sha256, packed.has(p.sha256)) }));
}
