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
 * Reads `<folder>/spans.jsonl`; an absent file is no spans. The file is an index, not the record, so a reader
 * never fails on it: a line that is not a span (cut by a kill, or edited) is left out, and a file that is a link
 * or not a plain file is read as none.
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
  const path = join(folder, SPANS_FILE);
  let text: string;
  try {
    if (!(await Deno.lstat(path)).isFile) return [];
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  const spans: StoredSpan[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (isStoredSpan(value)) spans.push(value);
  }
  return spans;
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
