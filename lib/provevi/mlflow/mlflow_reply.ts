/**
 * What an MLflow server says, read the one way the copy reads it: a reply is read up to a bound (an endless
 * reply is cut, not held), parsed as JSON and checked against the shape the API gives (zod), so a reply of
 * another shape is one line and never a TypeError later; and a server's error becomes one short line with
 * every credential of the request taken out, whatever the server echoes (its own message, a header it copied,
 * the URL's user and password), and no control character of it reaching a terminal.
 * @module
 */
import { z } from "zod";
import { ownChunk, readBytesCapped } from "../guard/body_bytes.ts";
import { holdsCredential } from "./credential_echo.ts";
import { concatBytes } from "../evidence/bytes.ts";

/** The largest reply the copy reads from MLflow: a page of 1,000 runs with their tags fits many times. */
export const MLFLOW_REPLY_BYTES = 32 * 1024 * 1024;

/** The most of an error's body that is read: its first line is all that is shown. */
const ERROR_BYTES = 64 * 1024;

/** A reply past its bound. */
export class ReplyTooLarge extends Error {
  /** @param limit The bound, in bytes. */
  constructor(readonly limit: number) {
    super(`the answer is larger than ${Math.round(limit / 1024 / 1024)} MiB`);
    this.name = "ReplyTooLarge";
  }
}

/**
 * Reads a reply's body as text, up to a bound; past it the body is cancelled.
 *
 * @param response The reply.
 * @param limit The bound in bytes; by default {@linkcode MLFLOW_REPLY_BYTES}, or 64 KiB for an error.
 * @returns The text.
 * @throws ReplyTooLarge past the bound (the caller names the server and the call).
 * @example
 * ```ts
 * import { readReply } from "./mlflow_reply.ts";
 * const text = await readReply(new Response("{}"));
 * ```
 */
export async function readReply(response: Response, limit?: number): Promise<string> {
  const bound = limit ?? (response.ok ? MLFLOW_REPLY_BYTES : ERROR_BYTES);
  if (response.body === null) return "";
  if (response.ok) {
    const bytes = await readBytesCapped(response.body, {
      max: bound,
      tooLarge: () => new ReplyTooLarge(bound),
    });
    return new TextDecoder().decode(bytes);
  }
  // an error's first line is enough: what fits is kept, the rest cancelled
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > bound) {
        chunks.push(value.subarray(0, value.length - (size - bound)));
        break;
      }
      chunks.push(ownChunk(value));
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(concatBytes(chunks));
}

/** An MLflow ID as the copy uses it again in later calls and prints: letters, digits, `_` and `-`. */
export const mlflowId: z.ZodString = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "not an MLflow ID");

/**
 * Parses a reply's text as JSON and checks it against the shape the API gives.
 *
 * @param text The reply's body (empty is `{}`).
 * @param schema The shape.
 * @returns The value, typed; or why not, in a few words.
 * @example
 * ```ts
 * import { z } from "zod";
 * import { parseReply } from "./mlflow_reply.ts";
 * parseReply('{"experiment_id":"1"}', z.object({ experiment_id: z.string() })); // { ok: true, value: … }
 * ```
 */
export function parseReply<T>(
  text: string,
  schema: z.ZodType<T>,
): { ok: true; value: T } | { ok: false; why: string } {
  let value: unknown;
  try {
    value = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return { ok: false, why: "it is not JSON" };
  }
  const checked = schema.safeParse(value);
  if (checked.success) return { ok: true, value: checked.data };
  const issue = checked.error.issues[0]!;
  const where = issue.path.length
    ? issue.path.map(String).join(".").replace(/[^A-Za-z0-9_.]/g, "?")
    : "the whole";
  return { ok: false, why: `${where.slice(0, 80)} is not what MLflow's API gives (${issue.code})` };
}

/**
 * What a server that refused a call said: its error code, if it is one, and its message cut to one short line
 * with every credential taken out.
 *
 * @param text The error's body.
 * @param secrets The credentials the request carried (a token, a password, the user's name with it, the
 *   `Authorization` header's value); each is taken out in the forms a server might echo it in.
 * @returns The code (or null) and the message (or null when nothing is left).
 * @example
 * ```ts
 * import { refusalOf } from "./mlflow_reply.ts";
 * refusalOf('{"error_code":"BAD","message":"Authorization: Bearer s3cr3t-t0ken"}', ["s3cr3t-t0ken"]);
 * // { code: "BAD", message: "Authorization: …" }
 * ```
 */
export function refusalOf(
  text: string,
  secrets: readonly string[],
): { code: string | null; message: string | null } {
  let code: string | null = null;
  let message = text;
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    if (typeof parsed.error_code === "string" && /^[A-Z][A-Z0-9_]{0,63}$/.test(parsed.error_code)) {
      code = parsed.error_code;
    }
    const said = parsed.message ?? parsed.detail;
    message = typeof said === "string" ? said : "";
  } catch { /* not JSON: the text itself */ }
  const line = withoutCredentials(message, secrets).split(/\r?\n/).map((l) => l.trim()).find((l) => l) ?? "";
  const cut = line.length > 200 ? `${line.slice(0, 200)}…` : line;
  return { code, message: cut === "" ? null : cut };
}

/** What is shown of a server's text that holds a credential in a form that cannot be cut out of it. */
const WITHHELD = "(its text is not shown: it held a credential of the request)";

/**
 * Takes credentials out of a text a server wrote: the request's own secrets in their raw, case-changed,
 * URL-encoded, base64 and hex forms; what follows `Basic `, `Bearer ` or `Token `; an `Authorization`,
 * `Cookie` or `X-Api-Key` header's value (to the end of its line); `password=`, `token=` and the like; a URL's user and password; and any
 * long run of token characters (`[A-Za-z0-9+/_.~-]`, 20 or more, letters and digits mixed, maybe `=` after) that is not an MLflow
 * ID or an API path. Control and invisible characters (a terminal's escapes among them) are taken out first.
 * A text that still holds a secret in any other form ({@linkcode holdsCredential}: spaced out, backwards, as
 * entities or escapes, base64 at another offset, across lines) is not shown at all.
 *
 * @param text What the server wrote.
 * @param secrets The request's credentials.
 * @returns The text with each credential as `…`.
 * @example
 * ```ts
 * import { withoutCredentials } from "./mlflow_reply.ts";
 * withoutCredentials("got https://ada:hunter2@mlflow.example.com", ["hunter2"]); // "got https://…@mlflow.example.com"
 * ```
 */
export function withoutCredentials(text: string, secrets: readonly string[]): string {
  // Control characters (a terminal's escapes) and invisible ones (zero-width, bidi) go: a secret split by
  // them is whole again, and found below. A tab is a space; a line break stays, for the caller to cut at.
  let out = text.replace(/\t/g, " ").replace(
    // deno-lint-ignore no-control-regex
    /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g,
    (c) => (c === "\r" ? "\n" : ""),
  );
  for (const form of secretForms(secrets)) {
    out = out.replace(new RegExp(form.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"), "gi"), "…");
  }
  const cut = out
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, "$1…@")
    .replace(
      /\b(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key)(["']?\s*[:=]\s*)[^\n,;}]*/gi,
      "$1$2…",
    )
    .replace(/\b(basic|bearer|token|digest)(\s+)[^\s,;"'}]+/gi, "$1$2…")
    .replace(
      /\b(password|passwd|pwd|token|secret|api_key|apikey|access_token|auth)(["']?\s*[:=]\s*["']?)[^\s&,;"'}]+/gi,
      "$1$2…",
    )
    .replace(/[A-Za-z0-9+/_.~-]{20,}={0,2}/g, (run) => (looksLikeToken(run) ? "…" : run));
  // A form the replacements above do not know (spaced out, backwards, entities, base64 at another offset,
  // across lines): the text is not shown at all.
  return holdsCredential(cut, secrets) ? WITHHELD : cut;
}

/**
 * A long run of token characters that is a key, not a word: letters and digits mixed, and not an MLflow ID
 * (32 hex digits, or `tr-` and 32) nor an API path (`/api/2.0/mlflow/runs/create`).
 */
function looksLikeToken(run: string): boolean {
  if (/^(tr-)?[0-9a-f]{32}$/.test(run)) return false;
  if (/^\/[a-z0-9._-]+(\/[a-z0-9._-]+)+\/?$/.test(run)) return false;
  return /[0-9]/.test(run) && /[A-Za-z]/.test(run);
}

/** The forms a server might echo a secret in, longest first, so a longer form goes before a part of it. */
function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  const bytes = (s: string) => new TextEncoder().encode(s);
  for (const secret of secrets) {
    if (secret.length < 3) continue; // too short to tell from the rest of a message
    const b64 = btoa(String.fromCharCode(...bytes(secret)));
    for (
      const form of [
        secret,
        encodeURIComponent(secret),
        JSON.stringify(secret).slice(1, -1),
        b64,
        b64.replace(/=+$/, ""),
        b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""),
        Array.from(bytes(secret), (b) => b.toString(16).padStart(2, "0")).join(""),
      ]
    ) {
      if (form.length >= 3) forms.add(form);
    }
  }
  return [...forms].sort((a, b) => b.length - a.length);
}
