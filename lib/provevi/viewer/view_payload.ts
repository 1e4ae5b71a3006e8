/**
 * A run's payloads as the viewer reads them: the head of a payload (its first bytes, so that a page shows a
 * 50 MB payload's start without reading it all), a preview of its content cut to the page, the head of a model
 * call's answer, and the whole payload as a stream for the one request that asks for it. The file in the run
 * folder is opened as the store opens it: a link, or a file swapped for one, is refused.
 * @module
 */
import { join } from "node:path";
import { ProveviError } from "../evidence/errors.ts";
import type { Json } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";
import { answerOf } from "../live/feed.ts";
import { cutJson, type CutLimits, PAGE_CUT, parseJsonHead } from "./view_cut.ts";
import { type FileReads, openFileNoWait } from "../evidence/fd_file.ts";

/** The bytes of a payload that a page reads: enough for the cut of {@linkcode PAGE_CUT}, or an answer's. */
export const HEAD_BYTES = 64 * 1024;

/** The characters of an answer that a page shows. */
export const ANSWER_CHARS = 16 * 1024;

/** The start of a payload and its whole size. */
export interface PayloadHead {
  head: Uint8Array;
  size: number;
}

/**
 * Opens a payload's file in the run folder, refusing a link anywhere on the way and a file swapped between
 * the look and the open.
 */
export async function openPayloadFile(folder: string, sha256: string): Promise<FileReads> {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new RangeError(`"${sha256}" is not a SHA-256`);
  const evidence = join(folder, "evidence");
  const payloads = join(evidence, "payloads");
  const path = join(payloads, sha256);
  for (const dir of [evidence, payloads]) {
    if ((await Deno.lstat(dir)).isSymlink) throw new ProveviError(`${dir} is a link, not a folder`);
  }
  // opened in one step, without waiting (a FIFO swapped in after a look held the open for ever) nor following a
  // link, and checked to be a plain file by what was opened
  return await openFileNoWait(path, { follow: false });
}

/**
 * The first bytes of a payload and its size.
 *
 * @param record The run.
 * @param sha256 The payload.
 * @param options `bytes`: how many bytes to read at most.
 * @returns The head and the size.
 * @throws ProveviError when the payload is missing, or is a link.
 */
export async function payloadHead(
  record: RunRecord,
  sha256: string,
  options: { bytes: number },
): Promise<PayloadHead> {
  const { bytes } = options;
  let file: FileReads | null = null;
  try {
    if (record.folder !== null) file = await openPayloadFile(record.folder, sha256);
  } catch (error) {
    // a payload without a file of its own may be in the pack of a run of format 2
    if (!(error instanceof Deno.errors.NotFound)) {
      throw new ProveviError(`run "${record.runId}" has no readable payload ${sha256}`, { cause: error });
    }
  }
  if (file === null) {
    const all = await record.payload(sha256);
    return { head: all.subarray(0, bytes), size: all.length };
  }
  try {
    const size = (await file.stat()).size;
    const head = new Uint8Array(Math.min(bytes, size));
    let filled = 0;
    while (filled < head.length) {
      const n = await file.read(head.subarray(filled));
      if (n === null) break;
      filled += n;
    }
    return { head: head.subarray(0, filled), size };
  } finally {
    file.close();
  }
}

/** The text of a head, without a character cut in half at its end. */
function headText(head: Uint8Array): string {
  return new TextDecoder().decode(head, { stream: true });
}

/**
 * A payload's content cut to a page: its JSON (or its text, when it is not JSON) from its head.
 *
 * @param record The run.
 * @param sha256 The payload.
 * @param limits The cut ({@linkcode PAGE_CUT} by default).
 * @returns The content, its size, and whether it was cut.
 */
export async function payloadPreview(
  record: RunRecord,
  sha256: string,
  limits: CutLimits = PAGE_CUT,
): Promise<{ value: Json; size: number; cut: boolean }> {
  const { head, size } = await payloadHead(record, sha256, { bytes: HEAD_BYTES });
  const whole = head.length === size;
  const text = headText(head);
  let parsed: { value: Json; cut: boolean } | null = null;
  if (whole) {
    try {
      parsed = cutJson(JSON.parse(text) as Json, limits);
    } catch { /* not JSON: shown as text */ }
  } else parsed = parseJsonHead(text, limits);
  if (parsed !== null) return { value: parsed.value, size, cut: parsed.cut || !whole };
  const cut = cutJson(text, limits);
  return { value: cut.value, size, cut: cut.cut || !whole };
}

/**
 * The start of a model call's answer, from the head of its reply payload.
 *
 * @param record The run.
 * @param sha256 The reply payload.
 * @returns The answer's text (at most {@linkcode ANSWER_CHARS} characters), whether it was cut, and the
 *   reply's size; null when the reply holds no answer.
 */
export async function answerPreview(
  record: RunRecord,
  sha256: string,
): Promise<{ text: string; cut: boolean; size: number } | null> {
  const { head, size } = await payloadHead(record, sha256, { bytes: HEAD_BYTES });
  const limits = { strings: ANSWER_CHARS, items: 10_000, depth: 8, more: "" };
  const whole = head.length === size;
  let value: Json;
  let cut = !whole;
  if (whole) {
    try {
      value = JSON.parse(headText(head)) as Json;
    } catch {
      return null;
    }
  } else {
    const parsed = parseJsonHead(headText(head), limits);
    if (parsed === null) return null;
    value = parsed.value;
  }
  let text = answerOf(value);
  if (text === null) return null;
  if (text.length > ANSWER_CHARS) {
    text = text.slice(0, ANSWER_CHARS);
    cut = true;
  }
  return { text, cut, size };
}
