/**
 * Whether a text a server wrote still holds a credential of the request, in any form a server (or a proxy, or a
 * debugging page) might turn it into. Taking each known form out is never complete: a server may space the
 * secret out, write it backwards, in full-width letters, as HTML entities, percent or `\x` escapes, hex with
 * colons, base64 of a longer text that holds it (so its base64 starts at another byte), or across two lines. So
 * the text is looked at in views that undo those forms, each cut to its letters and digits, and the secret,
 * cut the same way, is looked for in every view; a text that holds it anywhere is not shown at all.
 * @module
 */

/** A secret shorter than this, once cut to its letters and digits, cannot be told from the rest of a text. */
const SHORTEST = 6;

/**
 * Whether a text holds one of the secrets in any of the forms this module undoes.
 *
 * @param text What a server wrote.
 * @param secrets The request's credentials (a token, a password, `user:password`, a header's value).
 * @returns True when some view of the text holds a secret.
 * @example
 * ```ts
 * import { holdsCredential } from "./credential_echo.ts";
 * holdsCredential("pw h u n t e r 2 - S e c r e t", ["hunter2-Secret"]); // true
 * holdsCredential("the run was not found", ["hunter2-Secret"]); // false
 * ```
 */
export function holdsCredential(text: string, secrets: readonly string[]): boolean {
  const needles = secrets.flatMap(needlesOf);
  if (needles.length === 0) return false;
  const views = viewsOf(text);
  return needles.some((needle) => views.some((view) => view.includes(needle)));
}

/** A text cut to its letters and digits, lower-cased, after NFKC (full-width letters are letters). */
function skeleton(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/[^a-z0-9]/g, "");
}

/** The secret's skeleton, backwards, in ROT13, and its base64 at each of the three byte offsets. */
function needlesOf(secret: string): string[] {
  const plain = skeleton(secret);
  if (plain.length < SHORTEST) return [];
  const rot13 = plain.replace(/[a-z]/g, (c) => String.fromCharCode((c.charCodeAt(0) - 97 + 13) % 26 + 97));
  const out = [plain, [...plain].reverse().join(""), rot13];
  const bytes = new TextEncoder().encode(secret);
  for (let offset = 0; offset < 3; offset++) {
    // The secret after `offset` bytes of anything: the base64 characters that depend on its bytes alone.
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    const b64 = btoa(String.fromCharCode(...padded));
    const start = offset === 0 ? 0 : Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    const inner = skeleton(b64.slice(start, end));
    if (inner.length >= SHORTEST) out.push(inner);
  }
  return out;
}

/** The text's skeleton as it is, with escapes and entities undone, and with runs of hex read as bytes. */
function viewsOf(text: string): string[] {
  const decoded = unescapeAll(text);
  return [skeleton(text), skeleton(decoded), skeleton(hexRuns(decoded))];
}

/** `%41`, `\x41`, `\u0041`, `&#65;`, `&#x41;` and a few named entities, as the characters they stand for. */
function unescapeAll(text: string): string {
  const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", colon: ":" };
  let out = text;
  for (let i = 0; i < 3; i++) { // escapes of escapes (`%2541`), a few deep
    const next = out
      .replace(/&#x([0-9a-f]{1,6});?/gi, (_, h: string) => fromCode(parseInt(h, 16)))
      .replace(/&#([0-9]{1,7});?/g, (_, d: string) => fromCode(parseInt(d, 10)))
      .replace(/&([a-z]+);/gi, (m, n: string) => named[n.toLowerCase()] ?? m)
      .replace(/\\u\{?([0-9a-f]{4,6})\}?/gi, (_, h: string) => fromCode(parseInt(h, 16)))
      .replace(/(?:\\x|%)([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    if (next === out) break;
    out = next;
  }
  return out;
}

/** Runs of hex pairs (`68756e`, `68:75:6e`, `68 75 6e`, `0x68,0x75`) read as Latin-1 characters. */
function hexRuns(text: string): string {
  return text.replace(
    /(?:(?:0x)?[0-9a-f]{2}[\s:,.-]?){3,}/gi,
    (run) => {
      const pairs = run.replace(/0x/gi, "").replace(/[^0-9a-f]/gi, "");
      return pairs.length % 2 ? run : pairs.replace(/../g, (p) => String.fromCharCode(parseInt(p, 16)));
    },
  );
}

/** A code point as a character, or nothing when it is none. */
function fromCode(code: number): string {
  return Number.isInteger(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "";
}
