/**
 * C2SP tlog-checkpoint: the text of a signed note that names a log's tree at one size, `<origin>\n<size>\n<root
 * in base64>\n` and any extension lines.
 * @module
 */
import { Buffer } from "node:buffer";
import { ProveviError } from "../evidence/errors.ts";
import { HASH_SIZE } from "./merkle.ts";

/** A checkpoint's text, read. */
export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  /** Extension lines (none from this log). */
  extensions: string[];
}

/**
 * The text of a checkpoint.
 *
 * @param checkpoint The origin, size, root and extension lines.
 * @returns The note text, ending with a newline.
 * @example
 * ```ts
 * import { checkpointText } from "./checkpoint.ts";
 * checkpointText({ origin: "example.com/log", size: 0, root: new Uint8Array(32), extensions: [] });
 * ```
 */
export function checkpointText(checkpoint: Checkpoint): string {
  const lines = [
    checkpoint.origin,
    String(checkpoint.size),
    Buffer.from(checkpoint.root).toString("base64"),
    ...checkpoint.extensions,
  ];
  return lines.map((l) => `${l}\n`).join("");
}

/**
 * Reads a checkpoint's text (a note's text, signatures taken off).
 *
 * @param text The text.
 * @returns The checkpoint.
 * @throws ProveviError when it is not a checkpoint.
 */
export function parseCheckpoint(text: string): Checkpoint {
  const bad = (why: string) => new ProveviError(`not a checkpoint: ${why}`);
  if (!text.endsWith("\n")) throw bad("its text does not end with a newline");
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3) throw bad("fewer than three lines");
  const [origin, size, root, ...extensions] = lines as [string, string, string, ...string[]];
  if (origin === "") throw bad("its origin is empty");
  if (!/^(0|[1-9][0-9]*)$/.test(size) || !Number.isSafeInteger(Number(size))) {
    throw bad(`its size "${size}" is not a decimal number without leading zeros`);
  }
  if (!/^[A-Za-z0-9+/]{43}=$/.test(root)) throw bad("its root is not 32 bytes in base64");
  if (extensions.some((e) => e === "")) throw bad("an extension line is empty");
  const bytes = new Uint8Array(Buffer.from(root, "base64"));
  if (bytes.length !== HASH_SIZE) throw bad("its root is not 32 bytes");
  return { origin, size: Number(size), root: bytes, extensions };
}
