/**
 * The walk of a run's `events.jsonl` back to the last hash its build read: a line changed since the build breaks
 * it. Apart from the check of a run so that a worker can run it with nothing else of the check loaded.
 * @module
 */
import { sha256Hex } from "../../provevi/evidence/hash.ts";

/**
 * Where the lines of `events.jsonl` stop chaining to `last`, in one line; null when they chain whole.
 *
 * With `built`, the lines were verified when the run was built (each a canonical event, with a `prev` of its
 * own), and each line's `prev` is read where its text says `"prev":` (in RFC 8785 text that is a key, never a
 * string's content, which escapes its quotes) when it says it once; a line that says it more than once, or not
 * as a hash or null, is parsed. This proves as much as parsing every line: lines that chain whole to the last
 * hash are the bytes that were verified, so a line changed since breaks the chain at the first unchanged line
 * after it (or at the last hash), and that line is a verified event whose one `"prev":` is its own. Any break
 * is described by the full walk below, so the words are the same.
 */
export function chainBreak(text: string | null, last: string | null, built = false): string | null {
  if (text === null) return "the store's run has no events.jsonl now";
  if (!built) return parsedChainBreak(text, last);
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  let prev: string | null = null;
  for (const line of lines) {
    const said = prevOf(line);
    if (said === undefined || said !== prev) return parsedChainBreak(text, last);
    prev = sha256Hex(line);
  }
  return prev === last ? null : parsedChainBreak(text, last);
}

/** A line's one `prev`, read where it says `"prev":`; undefined when it says so more than once, or not plainly. */
function prevOf(line: string): string | null | undefined {
  const at = line.indexOf(PREV);
  if (at < 0 || line.indexOf(PREV, at + PREV.length) >= 0) return undefined;
  const from = at + PREV.length;
  if (line.startsWith("null", from)) return null;
  const end = from + 66;
  if (line[from] !== '"' || line[end - 1] !== '"') return undefined;
  const hash = line.slice(from + 1, end - 1);
  return HEX64.test(hash) ? hash : undefined;
}

const PREV = '"prev":';
const HEX64 = /^[0-9a-f]{64}$/;

/** {@linkcode chainBreak} by parsing every line, for its words, and for a run that was not built verified. */
function parsedChainBreak(text: string, last: string | null): string | null {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  let prev: string | null = null;
  for (const [i, line] of lines.entries()) {
    let said: unknown;
    try {
      said = (JSON.parse(line) as { prev?: unknown }).prev;
    } catch {
      return `events.jsonl line ${i + 1} is not JSON now`;
    }
    if (said !== prev) return `events.jsonl line ${i + 1} no longer chains to the line before it`;
    prev = sha256Hex(line);
  }
  return prev === last ? null : "the last line of events.jsonl no longer hashes to the manifest's last hash";
}
