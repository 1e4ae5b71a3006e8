/**
 * The key that seals a run's rows in a trace database: 32 random bytes in a file of the user's (mode 0600, in a
 * folder of mode 0700), never in the database. The build keeps, beside each run's `rows_digest`, an HMAC-SHA256
 * of the digest and of the SHA-256 of the run's manifest under this key (`trace_sources.rows_mac`). Whoever can
 * edit the database but not read the key can rewrite a run's rows and their digest, but not a MAC that matches
 * them, so `check` and the exports can trust rows whose MAC holds without building the run again from its
 * evidence (docs/provtrace.md, "What check proves").
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import canonicalize from "canonicalize";
import { ProveviError, readBoundedText, UnreadableFile } from "../../provevi/evidence/mod.ts";

/** The most bytes a rows key file is read to: 64 hex digits and a line end, with room for a stray space. */
const ROWS_KEY_MAX_BYTES = 4096;

/** What a run's MAC covers. */
export interface TraceRowsSeal {
  /** The run. */
  run_id: string;
  /** The digest of the run's rows (`traceRunDigest`). */
  rows_digest: string;
  /** The SHA-256 of the run's `manifest.json` as the build read it. */
  manifest_sha256: string;
}

/**
 * Where the key is by default: `$XDG_DATA_HOME/provtrace/rows.key`, else `~/.local/share/provtrace/rows.key`;
 * null when no variable names a home folder.
 *
 * @param env The variables to read; `Deno.env` by default.
 * @returns The path, or null.
 * @example
 * ```ts
 * import { defaultRowsKeyPath } from "./rows_key.ts";
 * defaultRowsKeyPath({ HOME: "/home/ada" }); // "/home/ada/.local/share/provtrace/rows.key"
 * ```
 */
export function defaultRowsKeyPath(
  env: Record<string, string | undefined> = { XDG_DATA_HOME: read("XDG_DATA_HOME"), HOME: read("HOME") },
): string | null {
  if (env.XDG_DATA_HOME) return resolve(env.XDG_DATA_HOME, "provtrace", "rows.key");
  if (env.HOME) return join(env.HOME, ".local", "share", "provtrace", "rows.key");
  return null;
}

function read(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no --allow-env for it: as if unset
  }
}

/**
 * Reads the key, or makes it when `create` is set and there is none (written under a temporary name with mode
 * 0600 and renamed, so no reader sees it half written or readable by others).
 *
 * @param path The key file.
 * @param options `create`: make the key when the file is missing.
 * @returns The key's 32 bytes, or null when the file is missing and `create` is not set.
 * @throws ProveviError when the file is not a key, or others may read it.
 * @example
 * ```ts
 * import { readRowsKey } from "./rows_key.ts";
 * const key = await readRowsKey("/tmp/provtrace-example/rows.key", { create: true });
 * ```
 */
export async function readRowsKey(
  path: string,
  options: { create?: boolean } = {},
): Promise<Uint8Array | null> {
  let text: string;
  try {
    // a regular file, bounded: a FIFO or a device in the key's place is refused, not waited on or read for ever
    text = await readBoundedText(path, { limit: ROWS_KEY_MAX_BYTES, what: "the rows key" });
  } catch (error) {
    if (!(error instanceof UnreadableFile && error.cause instanceof Deno.errors.NotFound)) throw error;
    if (!options.create) return null;
    return await makeKey(path);
  }
  if (Deno.build.os !== "windows" && ((await Deno.stat(path)).mode ?? 0) & 0o077) {
    throw new ProveviError(`the rows key ${path} may be read by others; chmod 600 ${path}`);
  }
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new ProveviError(
      `${path} is not a rows key (64 hex digits); remove it and build again to make one`,
    );
  }
  return Uint8Array.from(hex.match(/../g)!, (b) => parseInt(b, 16));
}

async function makeKey(path: string): Promise<Uint8Array> {
  const key = new Uint8Array(randomBytes(32));
  const hex = Array.from(key, (b) => b.toString(16).padStart(2, "0")).join("");
  await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${hex.slice(0, 12)}.tmp`;
  try {
    await Deno.writeTextFile(temporary, `${hex}\n`, { mode: 0o600, createNew: true });
    if (Deno.build.os !== "windows") await Deno.chmod(temporary, 0o600); // the umask may have dropped bits only
    await Deno.link(temporary, path); // fails if another build made the key meanwhile: then that one is read
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return (await readRowsKey(path))!;
    throw new ProveviError(`cannot make the rows key ${path}: ${(error as Error).message}`, { cause: error });
  } finally {
    await Deno.remove(temporary).catch(() => {});
  }
  return key;
}

/**
 * The MAC of a run's rows: HMAC-SHA256 under the key of the RFC 8785 JSON of what it covers, as hex.
 *
 * @param key The rows key.
 * @param seal The run, the digest of its rows and the SHA-256 of its manifest.
 * @returns 64 hex digits.
 * @example
 * ```ts
 * import { rowsMac } from "./rows_key.ts";
 * rowsMac(new Uint8Array(32), { run_id: "run-x", rows_digest: "ab…", manifest_sha256: "cd…" });
 * ```
 */
export function rowsMac(key: Uint8Array, seal: TraceRowsSeal): string {
  const text = canonicalize({
    manifest_sha256: seal.manifest_sha256,
    rows_digest: seal.rows_digest,
    run_id: seal.run_id,
  })!;
  const { inner, outer } = padsOf(key);
  const innerHash = createHash("sha256").update(inner).update(text).digest();
  return createHash("sha256").update(outer).update(innerHash).digest("hex");
}

/**
 * HMAC-SHA256's two padded keys (RFC 2104), made once per key: an export checks the MAC of each of thousands of
 * runs, and `createHmac` took the key in again each time (about 35 µs a run, against 8 µs for the two hashes).
 */
const pads = new WeakMap<Uint8Array, { key: Uint8Array; inner: Uint8Array; outer: Uint8Array }>();

function padsOf(key: Uint8Array): { inner: Uint8Array; outer: Uint8Array } {
  let found = pads.get(key);
  // Kept by the array, and made again when its bytes are not the ones they were made of (an array changed in
  // place is another key).
  if (found === undefined || !Buffer.from(found.key).equals(key)) {
    const block = new Uint8Array(64); // SHA-256's block: a longer key is hashed first
    block.set(key.length > 64 ? createHash("sha256").update(key).digest() : key);
    found = { key: key.slice(), inner: block.map((b) => b ^ 0x36), outer: block.map((b) => b ^ 0x5c) };
    pads.set(key, found);
  }
  return found;
}

/**
 * Whether a MAC the database holds is the one the rows give, compared in constant time.
 *
 * @param held The MAC in `trace_sources.rows_mac`, or null.
 * @param against The rows key, and what the MAC covers as found now.
 * @returns True when it holds.
 */
export function rowsMacHolds(
  held: string | null,
  { key, seal }: { key: Uint8Array; seal: TraceRowsSeal },
): boolean {
  if (held === null || !/^[0-9a-f]{64}$/.test(held)) return false;
  return timingSafeEqual(Buffer.from(held, "hex"), Buffer.from(rowsMac(key, seal), "hex"));
}
