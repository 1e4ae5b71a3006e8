/**
 * The citations of the `note` tool's note: each names its source, a file of the run (`/input/…`, `/output/…`)
 * that exists when the note is written, or a URI (a catalog URI, a web address), and may quote it. They are
 * recorded as data of `note_added`, so a reader finds what the agent cited without parsing its text.
 * @module
 */

/** One citation of a note. */
export interface Citation {
  /** The file of the run as the agent sees it (`/input/revenue.csv`), or a URI (`data://…`, `https://…`). */
  source: string;
  /** The words cited, when the agent gives them. */
  quote?: string;
}

/** The most citations one note holds, and the longest source and quote. */
export const CITATION_LIMITS = { count: 64, source: 2048, quote: 4096 } as const;

/** The JSON schema of the `citations` argument, as the model is offered it. */
export const CITATIONS_SCHEMA = {
  type: "array",
  description:
    "What the note cites: a file such as /input/data.csv, or a URI; with the words quoted, if any.",
  maxItems: CITATION_LIMITS.count,
  items: {
    type: "object",
    properties: { source: { type: "string" }, quote: { type: "string" } },
    required: ["source"],
    additionalProperties: false,
  },
} as const;

const URI = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;

/**
 * Checks a note's citations.
 *
 * @param raw The `citations` argument, or undefined.
 * @param resolve Maps a run file's path to its agent view, throwing when the file is not there or refused.
 * @returns The citations, each source a run file's view or a URI.
 * @throws TypeError naming the citation that is malformed (the model sees it as the tool's error).
 * @example
 * ```ts
 * import { checkCitations } from "./note_citations.ts";
 * import assert from "node:assert/strict";
 * const cited = await checkCitations([{ source: "data://acme/demo/dev/q" }], (p) => Promise.resolve(p));
 * assert.deepEqual(cited, [{ source: "data://acme/demo/dev/q" }]);
 * ```
 */
export async function checkCitations(
  raw: unknown,
  resolve: (agentPath: string) => Promise<string>,
): Promise<Citation[]> {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new TypeError("citations must be a list of { source, quote? }");
  if (raw.length > CITATION_LIMITS.count) {
    throw new TypeError(`a note holds at most ${CITATION_LIMITS.count} citations, not ${raw.length}`);
  }
  const out: Citation[] = [];
  for (const [i, c] of raw.entries()) {
    const where = `citation ${i + 1}`;
    if (c === null || typeof c !== "object" || Array.isArray(c)) {
      throw new TypeError(`${where} is not an object`);
    }
    const { source, quote, ...rest } = c as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length) {
      throw new TypeError(`${where} has ${extra.join(", ")}; a citation has source and quote`);
    }
    if (typeof source !== "string" || !source.trim() || source.length > CITATION_LIMITS.source) {
      throw new TypeError(`${where} needs a source of 1 to ${CITATION_LIMITS.source} characters`);
    }
    if (quote !== undefined && (typeof quote !== "string" || quote.length > CITATION_LIMITS.quote)) {
      throw new TypeError(
        `${where} has a quote that is not a text of at most ${CITATION_LIMITS.quote} characters`,
      );
    }
    const cited = source.startsWith("/") ? await resolve(source) : source;
    if (!source.startsWith("/") && !URI.test(source)) {
      throw new TypeError(
        `${where} cites "${source}", which is neither a file of /input or /output nor a URI`,
      );
    }
    out.push(quote === undefined ? { source: cited } : { source: cited, quote });
  }
  return out;
}
