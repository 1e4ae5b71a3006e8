/**
 * The rows of the protobuf bodies `prove serve` took for a run, made by the run's writer as it takes each body
 * from `received.spans` (checked against its hash and stored as a payload): one pass over the body's bytes
 * (`otlp_rows.ts`), else the general way, appended to the run folder's `spans.jsonl`. The daemon only checks a
 * body before it answers its request, so a request costs the daemon a check, not the rows too; the rows are
 * the same lines the daemon wrote before, made from the very bodies the run keeps.
 *
 * `spans.jsonl` is an index outside the evidence, which no check covers (docs/evidence-format.md): a body that
 * no event of the daemon names (written to the file by another process) gets its rows too, as the seal's
 * `telemetry_problem` names it.
 * @module
 */
import { SpansFile } from "../evidence/spans_file.ts";
import { decodeTraceRequest } from "./otlp_receiver.ts";
import { decodeTraceRows } from "./otlp_rows.ts";
import { Texts } from "./row_texts.ts";
import { BYTES, Wire } from "./otlp_wire.ts";
import { requestRecords } from "./span_events.ts";
import { DEFAULT_MAX_BODY, DEFAULT_MAX_REQUEST_SPANS, refuseRepeatedScope } from "./span_intake.ts";

/**
 * The spans of a request, counted by their fields alone (each skipped by its length, nothing made): of a body the
 * general way reads, the count it finds; of another, some count or an error, which the general way would refuse.
 */
function countSpans(body: Uint8Array): number {
  const wire = new Wire(body);
  let count = 0;
  const inside = (end: number, field: number, within: (end: number) => void) =>
    wire.fields(end, (n, t) => {
      if (n !== field || t !== BYTES) return false;
      within(wire.delimited(end));
      return true;
    });
  inside(body.length, 1, (resource) =>
    inside(resource, 2, (scope) =>
      inside(scope, 2, (span) => {
        count++;
        wire.pos = span;
      })));
  return count;
}

/** The rows of a run's received protobuf bodies, appended to its `spans.jsonl` as they are stored. */
export class ReceivedRows {
  #file: SpansFile | null = null;
  /** The texts' JSON, kept from a body to the next: a run's bodies repeat their names, scopes and statuses. */
  readonly #texts = new Texts();
  /** The bodies whose rows could not be made or written, by SHA-256, with why. */
  readonly failed = new Map<string, string>();

  /** @param folder The run folder. */
  constructor(readonly folder: string) {}

  /**
   * Makes a body's rows and appends them. Never fails: a body whose rows cannot be made or written is noted in
   * {@linkcode ReceivedRows.failed} (its spans stay in the evidence; the index lacks them).
   *
   * @param body The body, as stored.
   * @param sha256 Its SHA-256.
   */
  add(body: Uint8Array, sha256: string): void {
    try {
      // what prove serve takes, at most: a larger body is none it took (a record another process wrote)
      if (body.length > DEFAULT_MAX_BODY) throw new Error(`the body is over ${DEFAULT_MAX_BODY} bytes`);
      // nor one of more spans than a request may hold: its rows would cost the writer what prove serve refuses
      const spans = countSpans(body);
      if (spans > DEFAULT_MAX_REQUEST_SPANS) {
        throw new Error(`the body holds ${spans} spans, over the ${DEFAULT_MAX_REQUEST_SPANS} of a request`);
      }
      const file = this.#file ??= new SpansFile(this.folder);
      const rows = decodeTraceRows(body, this.#texts);
      if (rows === null) {
        // the general way, with the daemon's bound on the scope names its rows repeat
        const spans = decodeTraceRequest(body);
        refuseRepeatedScope(spans, body.length);
        file.append(requestRecords(spans, { encoding: "protobuf" }).rows);
        return;
      }
      try {
        file.appendLines(rows.lines);
      } finally {
        rows.release();
      }
    } catch (error) {
      this.failed.set(sha256, (error as Error).message.split("\n")[0]!.slice(0, 300));
    }
  }

  /** Closes `spans.jsonl`. */
  close(): void {
    this.#file?.close();
    this.#file = null;
  }
}
