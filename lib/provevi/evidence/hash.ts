/**
 * SHA-256 helpers over `node:crypto`, the one hash of the evidence.
 * @module
 */
import { createHash } from "node:crypto";

const encoder = new TextEncoder();

/**
 * The lowercase hex SHA-256 of a text's UTF-8 bytes or of bytes.
 *
 * @param data A text or bytes.
 * @returns 64 lowercase hex digits.
 * @example
 * ```ts
 * import { sha256Hex } from "./hash.ts";
 * sha256Hex("abc"); // "ba7816bf…"
 * ```
 */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** UTF-8 bytes of a text. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** True when `text` is 64 lowercase hex digits. */
export function isSha256(text: unknown): text is string {
  return typeof text === "string" && /^[0-9a-f]{64}$/.test(text);
}

/**
 * Hashes a file as a stream, with a large buffer, so that verifying big payloads runs near the speed of the
 * hash itself.
 *
 * @param path The file.
 * @returns Its SHA-256 and size in bytes.
 * @throws Deno.errors.NotFound when the file is missing.
 */
export async function sha256File(path: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash("sha256");
  using file = await Deno.open(path, { read: true });
  let size = 0;
  // Synchronous reads into one reused buffer: the async read path costs a copy and a task per chunk, which
  // showed as a third of the time on big payloads.
  for (;;) {
    const n = file.readSync(readBuffer);
    if (n === null) break;
    size += n;
    hash.update(n === readBuffer.length ? readBuffer : readBuffer.subarray(0, n));
  }
  return { sha256: hash.digest("hex"), size };
}

const readBuffer = new Uint8Array(4 << 20);
