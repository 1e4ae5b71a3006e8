/**
 * The span index beside the evidence: `<run folder>/spans.jsonl`, one span a line. Spans are an index and a
 * timeline over the evidence, not the record: the file is outside `evidence/`, so no check covers it.
 * @module
 */
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
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
 * Appends spans to `<folder>/spans.jsonl`, one JSON object a line: what `FileStore` and `SqliteStore` do.
 *
 * @param folder The run folder.
 * @param spans The spans.
 * @example
 * ```ts
 * import { appendSpansFile } from "./spans_file.ts";
 * await appendSpansFile("/tmp/runs/run-x", []);
 * ```
 */
export async function appendSpansFile(folder: string, spans: readonly StoredSpan[]): Promise<void> {
  if (spans.length === 0) return;
  await appendFile(join(folder, SPANS_FILE), spans.map((s) => JSON.stringify(s) + "\n").join(""));
}

/**
 * Reads `<folder>/spans.jsonl`; an absent file is no spans.
 *
 * @param folder The run folder.
 * @returns The spans in the order they ended.
 * @example
 * ```ts
 * import { readSpansFile } from "./spans_file.ts";
 * const spans = await readSpansFile("/tmp/runs/run-x");
 * ```
 */
export async function readSpansFile(folder: string): Promise<StoredSpan[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(join(folder, SPANS_FILE));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as StoredSpan);
}
