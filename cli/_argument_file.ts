/**
 * A small file named on the command line (a verifier key, a checkpoint, a witness's key, a prompt), read as a
 * regular file only and bounded while it is read: a FIFO or a device given (or planted where a key was) is
 * refused in one line instead of holding the command for ever, and a huge file instead of taking its memory.
 * @module
 */
import { readBoundedText } from "../lib/provevi/evidence/mod.ts";

/** The most bytes of such a file: a key or a checkpoint is a few hundred, a prompt as long as a run file's. */
export const ARGUMENT_FILE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The text of a small file named on the command line.
 *
 * @param path The file.
 * @param what What the file is, for the message ("the checkpoint").
 * @returns Its text.
 * @throws UnreadableFile, one line naming the file and why it cannot be read (not a regular file, too big,
 * not UTF-8, missing).
 */
export function argumentFile(path: string, what: string): Promise<string> {
  return readBoundedText(path, { limit: ARGUMENT_FILE_MAX_BYTES, what });
}
