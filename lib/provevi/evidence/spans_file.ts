/**
 * The span index beside the evidence: `<run folder>/spans.jsonl`, one span a line. Spans are an index and a
 * timeline over the evidence, not the record: the file is outside `evidence/`, so no check covers it.
 * @module
 */
import { jsonLineWeight, parseJson } from "./json_depth.ts";
import { IrregularFile, openPlainFileSync, type PlainFile, tooBig } from "./open_file.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "./payload_pack.ts";
import { LineReader } from "./line_reader.ts";
import { appendWhole } from "./append_whole.ts";
import { join } from "node:path";
import { EvidenceError } from "./errors.ts";
import type { Json } from "./event.ts";

/** One span as a store keeps it: a line of `spans.jsonl`. */
export interface StoredSpan {
  [key: string]: Json;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  /** The OpenTelemetry span kind: 0 internal, 1 server, 2 client, 3 producer, 4 consumer. */
  kind: number;
  /** The instrumentation scope that made the span. */
  scope: { name: string; version: string | null };
  /** ISO 8601 UTC with microseconds. */
  start_time: string;
  end_time: string;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string | null };
  attributes: { [key: string]: Json };
  events: { name: string; time: string; attributes: { [key: string]: Json } }[];
  links: { trace_id: string; span_id: string }[];
}

/** A store that keeps spans: `addSpans` is optional in {@linkcode EvidenceStore}. */
export interface SpanSink {
  /** Appends a run's spans to its index. */
  addSpans(runId: string, spans: readonly StoredSpan[]): Promise<void>;
}

/** The name of the span index in a run folder. */
export const SPANS_FILE = "spans.jsonl";

/**
 * One run's `spans.jsonl`, open to append from its first rows until {@linkcode SpansFile.close}: each call
 * appends its rows with one write to the open file, where opening the file again for each batch cost more than
 * making its rows. The writes are the file's only durability: written whole before `append` returns (the
 * operating system holds them past the end of the process), never fsynced, as before the file was kept open
 * (the file is an index, which the events can rebuild). After `close` each call opens, writes and closes.
 *
 * @example
 * ```ts
 * import { SpansFile } from "./spans_file.ts";
 * const folder = await Deno.makeTempDir();
 * const spans = new SpansFile(folder);
 * spans.append([]); // nothing to write: the file is not made
 * spans.close();
 * ```
 */
export class SpansFile {
  /** The path of `spans.jsonl`. */
  readonly path: string;
  #file: PlainFile | null = null;
  #closed = false;

  /** @param folder The run folder. */
  constructor(folder: string) {
    this.path = join(folder, SPANS_FILE);
  }

  /**
   * Appends spans, one JSON object a line, with one write. A write that fails part way is taken back, so that
   * a cut line does not join the next batch's first row.
   *
   * @param spans The spans.
   * @throws EvidenceError when the file cannot take them; none of them is in it then.
   */
  append(spans: readonly StoredSpan[]): void {
    if (spans.length === 0) return;
    // joined, not added: one flat text for the encoder
    this.appendLines(encoder.encode(spans.map((s) => JSON.stringify(s) + "\n").join("")));
  }

  /**
   * Appends lines made already, each a span's JSON and a newline (the receiver writes them straight from the
   * protobuf: `receiver/otlp_rows.ts`), with one write, taken back if it fails part way.
   *
   * @param bytes The lines, as UTF-8.
   * @throws EvidenceError when the file cannot take them; none of them is in it then.
   */
  appendLines(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    let file: PlainFile | null = null;
    try {
      // the run's program writes its run folder: never through a link it planted, nor into its FIFO
      file = this.#file ?? openPlainFileSync(this.path, { write: true, create: true });
      if (!this.#closed) this.#file = file;
      appendWhole(file, bytes);
    } catch (error) {
      // a link, FIFO or hard link in its place is no passing fault: the spans are refused, and the run told
      if (error instanceof IrregularFile) throw new IrregularFile(SPANS_FILE, error.reason, { cause: error });
      throw new EvidenceError(`cannot write to ${this.path}: ${(error as Error).message}`, { cause: error });
    } finally {
      if (this.#closed) file?.close();
    }
  }

  /** Closes the file; a later {@linkcode SpansFile.append} opens it for its own write. */
  close(): void {
    this.#closed = true;
    try {
      this.#file?.close();
    } catch { /* closed already */ }
    this.#file = null;
  }
}

const encoder = new TextEncoder();

/**
 * Appends spans to `<folder>/spans.jsonl`, one JSON object a line, with one write to the file opened for it:
 * for a run whose {@linkcode SpansFile} this process does not hold.
 *
 * @param folder The run folder.
 * @param spans The spans.
 * @throws EvidenceError when the file cannot take them.
 * @example
 * ```ts
 * import { appendSpansFile } from "./spans_file.ts";
 * await appendSpansFile("/tmp/runs/run-x", []);
 * ```
 */
export function appendSpansFile(folder: string, spans: readonly StoredSpan[]): Promise<void> {
  try {
    const file = new SpansFile(folder);
    file.close();
    file.append(spans);
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * The most spans a reader takes of one run's index: the spans a run may send by default, and as many again of
 * its own. A forged index of small lines (half a GiB holds a million and a half) is read no further.
 */
export const SPANS_READ_MAX = 400_000;

/**
 * The most a reader parses of one run's index, in the weight {@linkcode spanLineWeight} gives a line: about
 * what the parsed spans take of the heap at most. Counting spans alone did not bound it: a line parsed takes far
 * more memory than its text when it holds many small values (an empty object is 3 bytes of text and some 96 of
 * the heap), so two forged spans of 15 MiB took 923 MiB, and the 512 MiB a file may hold some 15 GiB.
 */
export const SPANS_READ_WEIGHT = 512 * 1024 * 1024;

/** What a line of the index may take of the heap once parsed ({@linkcode jsonLineWeight}). */
export const spanLineWeight = jsonLineWeight;

/**
 * The spans a reader takes of one run, from its index and from the bodies its evidence keeps (`receiver/
 * received_rows.ts`), counted and weighed together: each line is weighed before it is parsed
 * ({@linkcode spanLineWeight}), a line that is not a span is left out, and nothing more is taken once
 * {@linkcode SPANS_READ_MAX} spans are or a line would take the lines parsed past {@linkcode SPANS_READ_WEIGHT}.
 *
 * @example
 * ```ts
 * import { SpanTake } from "./spans_file.ts";
 * const take = new SpanTake();
 * take.line('{"not":"a span"}'); // true: left out, and there is room for more
 * take.spans; // []
 * ```
 */
export class SpanTake {
  /** The spans taken, in the order their lines came. */
  readonly spans: StoredSpan[] = [];
  #weight = 0;
  #full = false;

  /** Whether nothing more is taken. */
  get full(): boolean {
    return this.#full;
  }

  /**
   * Takes one line of a span's JSON, without its newline.
   *
   * @param line The line.
   * @returns False once nothing more is taken (this line included, when it would pass the weight).
   */
  line(line: string): boolean {
    if (this.#full) return false;
    // weighed before it is parsed: a line that is no span takes the heap while it is parsed too
    this.#weight += spanLineWeight(line);
    if (this.#weight > SPANS_READ_WEIGHT) return !(this.#full = true);
    let value: unknown;
    try {
      value = parseJson(line); // a span nested too deep is skipped, as a line that is not JSON
    } catch {
      return true;
    }
    if (!isStoredSpan(value)) return true;
    this.spans.push(value);
    if (this.spans.length >= SPANS_READ_MAX) this.#full = true;
    return !this.#full;
  }
}

/**
 * Reads `<folder>/spans.jsonl`; an absent file is no spans. The file is an index, not the record, so a reader
 * never fails on it: a line that is not a span (cut by a kill, or edited) is left out, and a file that is a link
 * or not a plain file is read as none. It is read a bounded piece at a time (`LineReader`): a line past 16 MiB
 * ends the reading, and so do the bounds of a {@linkcode SpanTake}, or the 512 MiB any evidence file may hold (a
 * file past them already is refused).
 *
 * @param folder The run folder.
 * @param take What the run's spans took already, to go on with (a new one by default).
 * @returns The spans taken, in the order they ended, at most {@linkcode SPANS_READ_MAX}.
 * @throws IrregularFile when the file holds more than the 512 MiB a reader of evidence takes.
 * @example
 * ```ts
 * import { readSpansFile } from "./spans_file.ts";
 * const spans = await readSpansFile("/tmp/runs/run-x");
 * ```
 */
export async function readSpansFile(folder: string, take = new SpanTake()): Promise<StoredSpan[]> {
  const path = join(folder, SPANS_FILE);
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile || take.full) return take.spans;
    // past the cap already: refused, as a reader of any evidence file refuses it, not read to the cap
    if (info.size > EVIDENCE_TEXT_MAX_BYTES) throw tooBig(path, info.size, EVIDENCE_TEXT_MAX_BYTES);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return take.spans;
    throw error;
  }
  const reader = new LineReader(path);
  do {
    for (const line of await reader.next()) if (!take.line(line)) return take.spans;
  } while (!reader.ended);
  return take.spans;
}

const HEX16 = /^[0-9a-f]{16}$/;
const HEX32 = /^[0-9a-f]{32}$/;

/** Whether a parsed line has the fields a reader of spans relies on. */
function isStoredSpan(value: unknown): value is StoredSpan {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const s = value as Record<string, unknown>;
  const scope = s.scope as Record<string, unknown> | null;
  const status = s.status as Record<string, unknown> | null;
  return typeof s.trace_id === "string" && HEX32.test(s.trace_id) &&
    typeof s.span_id === "string" && HEX16.test(s.span_id) &&
    (s.parent_span_id === null || (typeof s.parent_span_id === "string" && HEX16.test(s.parent_span_id))) &&
    typeof s.name === "string" && typeof s.kind === "number" &&
    typeof s.start_time === "string" && typeof s.end_time === "string" &&
    typeof scope === "object" && scope !== null && typeof scope.name === "string" &&
    typeof status === "object" && status !== null && typeof status.code === "number" &&
    typeof s.attributes === "object" && s.attributes !== null && !Array.isArray(s.attributes) &&
    Array.isArray(s.events) && Array.isArray(s.links);
}
