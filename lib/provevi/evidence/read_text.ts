/**
 * Reading a small text file that a user names (a run file, a policy, a test script) without trusting it: only
 * a regular file is opened (a FIFO would block, `/dev/zero` never ends), its size is checked while it is read
 * (not from `stat`, which a device or a growing file can belie), and its bytes must be UTF-8.
 * @module
 */
import { isAbsolute } from "node:path";
import { ProveviError } from "./errors.ts";
import { concatBytes } from "./bytes.ts";
import { openNoWait } from "./open_file.ts";

/** A file that {@linkcode readBoundedText} refuses: `reason` says why, without the file's name. */
export class UnreadableFile extends ProveviError {
  /** @param what What the file is. @param path The file. @param reason Why, and the fix. */
  constructor(readonly what: string, readonly path: string, readonly reason: string, options?: ErrorOptions) {
    super(`cannot read ${what} ${path}: ${reason}`, options);
    this.name = "UnreadableFile";
  }
}

/**
 * Reads a regular file as UTF-8 text, at most `limit` bytes.
 *
 * @param path The file.
 * @param options `limit`: the most bytes; `what`: what the file is, for messages ("the run file").
 * @returns The text.
 * @throws UnreadableFile, one line naming the file and the fix, when it is not a regular file, is larger than
 * the limit, is not UTF-8, or cannot be read.
 * @example
 * ```ts
 * import { readBoundedText } from "./read_text.ts";
 * const text = await readBoundedText("deno.json", { limit: 1024 * 1024, what: "the config" });
 * ```
 */
export async function readBoundedText(
  path: string,
  options: { limit: number; what: string },
): Promise<string> {
  const { limit, what } = options;
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    // Said as a person would: Deno's own text is "No such file or directory (os error 2): stat 'x.yaml'".
    const reason = !(error instanceof Deno.errors.NotFound)
      ? firstLine(error)
      : isAbsolute(path)
      ? "there is no such file"
      : `there is no such file (a relative path is taken from ${cwdOrDot()})`;
    throw new UnreadableFile(what, path, reason, { cause: error });
  }
  if (!info.isFile) {
    const kind = info.isDirectory
      ? "a folder"
      : info.isFifo
      ? "a FIFO"
      : info.isCharDevice || info.isBlockDevice
      ? "a device"
      : info.isSocket
      ? "a socket"
      : "not a regular file";
    throw new UnreadableFile(what, path, `it is ${kind}; give the path of a regular file`);
  }
  const parts: Uint8Array[] = [];
  let size = 0;
  let opened: Awaited<ReturnType<typeof openNoWait>> | null = null;
  try {
    // opened without waiting: a FIFO swapped in after the look is refused here, not waited on for ever
    opened = await openNoWait(path);
    if (!opened.info.isFile) {
      throw new UnreadableFile(what, path, `it is ${opened.info.kind}; give the path of a regular file`);
    }
    const buf = new Uint8Array(64 * 1024);
    for (;;) {
      const { bytesRead: n } = await opened.handle.read(buf, 0, buf.length, null);
      if (n === 0) break;
      size += n;
      if (size > limit) {
        throw new UnreadableFile(
          what,
          path,
          `it is larger than ${limit} bytes; ${what} is a short text file`,
        );
      }
      parts.push(buf.slice(0, n));
    }
  } catch (error) {
    if (error instanceof UnreadableFile) throw error;
    throw new UnreadableFile(what, path, firstLine(error), { cause: error });
  } finally {
    await opened?.handle.close().catch(() => {});
  }
  const bytes = concatBytes(parts);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch (error) {
    throw new UnreadableFile(what, path, "it is not UTF-8 text; save it as UTF-8", { cause: error });
  }
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}

/** The folder relative paths are taken from, or "the current folder" when it cannot be told. */
function cwdOrDot(): string {
  try {
    return Deno.cwd();
  } catch {
    return "the current folder";
  }
}
