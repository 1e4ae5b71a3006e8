/**
 * A file the writer holds open (a run's `events.jsonl`, its `payloads.pack`) put back at its name when another
 * party replaced, moved or removed it meanwhile: a run's program writes its run folder, and the seal sealed the
 * bytes it wrote while the file at the name held others (provr called the run completed and every check failed
 * it). The writer's descriptor still holds every byte it wrote (a file unlinked lives while it is open).
 * @module
 */
import { basename, join } from "node:path";
import { appendWhole } from "../evidence/append_whole.ts";
import { openFileNoWaitSync } from "../evidence/fd_file.ts";
import { EvidenceError } from "../evidence/errors.ts";

/**
 * Puts the open file's bytes back at `path` when `path` no longer names it: what was put there (a file, a
 * folder, a FIFO, a link) is moved aside into `aside`, whole, as `.<name>.moved-<uuid>`, and the bytes go into a
 * new file at the name, opened through the one no-follow open.
 *
 * @param file The writer's file, open to read.
 * @param path Its name.
 * @param aside The folder that takes what was put at the name (the run folder, which no check lists).
 * @returns The new file (open to read and write; the caller closes the old one), or null when the name still
 *   names the file.
 * @throws EvidenceError when the file cannot be read back whole; the system's error when the name cannot be
 *   cleared or the file made.
 */
export function keptAtName(file: Deno.FsFile, path: string, aside: string): Deno.FsFile | null {
  const mine = file.statSync();
  let seen: Deno.FileInfo | null = null;
  try {
    seen = Deno.lstatSync(path);
  } catch { /* gone: made again below */ }
  if (seen?.isFile && seen.ino === mine.ino && seen.dev === mine.dev) return null;
  if (seen) Deno.renameSync(path, join(aside, `.${basename(path)}.moved-${crypto.randomUUID()}`));
  const copy = openFileNoWaitSync(path, { follow: false, write: true, create: true });
  try {
    const bytes = new Uint8Array(mine.size);
    file.seekSync(0, Deno.SeekMode.Start);
    for (let n = 0; n < bytes.length;) {
      const got = file.readSync(bytes.subarray(n));
      if (got === null) throw new EvidenceError(`${path} held ${n} bytes of the ${bytes.length} written`);
      n += got;
    }
    appendWhole(copy, bytes);
    return copy;
  } catch (error) {
    copy.close();
    throw error;
  }
}
