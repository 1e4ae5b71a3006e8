/**
 * A file another party can swap, opened without waiting and checked (`open_file.ts`), then read as a
 * `Deno.FsFile` is. Deno's fast reads need a `Deno.FsFile`, which Deno makes only by opening a path: the checked
 * descriptor's `/proc/self/fd/N` names the very file checked, but Deno refuses that path under any permission set
 * short of `--allow-all` ("Requires all access"), and every command runs under its set. Opening the path again
 * there waited for ever on a pipe renamed to it after the check (3,000 swaps hung `prove` and `provr`). So, to
 * read, where no such link may be opened, the checked descriptor itself is read ({@linkcode FdFile}); a file opened to
 * write or to lock is opened once by Deno (the only open that gives a `Deno.FsFile`) and checked by what it opened.
 * @module
 */
import fs from "node:fs";
import {
  closeNoWait,
  type FsFileOptions,
  openAtPathSync,
  openChecked,
  openedInfoOf,
  type Opener,
  refuseUnlessPlain,
} from "./open_file.ts";

/** False once Deno refused `/proc/self/fd/` here (another system, or a permission set). */
let fdLinks = Deno.build.os === "linux";

/** What a file opened to read gives: a `Deno.FsFile`'s reads, seeks, looks and stream. */
export type FileReads =
  & Pick<Deno.FsFile, "read" | "readSync" | "seek" | "seekSync" | "close" | "readable">
  & Disposable
  & { stat(): Promise<{ size: number }>; statSync(): { size: number } };

/** A checked descriptor, read with `node:fs` at a position of its own, as a `Deno.FsFile` reads. */
export class FdFile implements Disposable {
  #at = 0;
  #open = true;

  /** @param fd The descriptor, the file's own from now on. */
  constructor(readonly fd: number) {}

  /** Reads into `p` from where the last read or seek left off; null at the end. */
  readSync(p: Uint8Array): number | null {
    if (p.length === 0) return 0;
    const n = fs.readSync(this.fd, p, 0, p.length, this.#at);
    this.#at += n;
    return n === 0 ? null : n;
  }

  /** {@linkcode FdFile.readSync}, on a thread of the runtime's. */
  read(p: Uint8Array): Promise<number | null> {
    if (p.length === 0) return Promise.resolve(0);
    const at = this.#at;
    return new Promise((resolve, reject) =>
      fs.read(this.fd, p, 0, p.length, at, (error, n) => {
        if (error) return reject(error);
        this.#at = at + n;
        resolve(n === 0 ? null : n);
      })
    );
  }

  /** Moves where the next read starts; returns it. */
  seekSync(offset: number | bigint, whence: Deno.SeekMode): number {
    const base = whence === Deno.SeekMode.Start
      ? 0
      : whence === Deno.SeekMode.Current
      ? this.#at
      : this.statSync().size;
    const at = base + Number(offset);
    if (at < 0) throw new RangeError(`a seek to ${at}, before the file's start`);
    this.#at = at;
    return at;
  }

  /** {@linkcode FdFile.seekSync}, as a promise. */
  seek(offset: number | bigint, whence: Deno.SeekMode): Promise<number> {
    return Promise.resolve().then(() => this.seekSync(offset, whence));
  }

  /** The file's size now. */
  statSync(): { size: number } {
    return { size: Number(fs.fstatSync(this.fd).size) };
  }

  /** {@linkcode FdFile.statSync}, as a promise. */
  stat(): Promise<{ size: number }> {
    return Promise.resolve().then(() => this.statSync());
  }

  /** The rest of the file as a stream, which closes the file at its end or when cancelled. */
  get readable(): ReadableStream<Uint8Array<ArrayBuffer>> {
    return new ReadableStream<Uint8Array<ArrayBuffer>>({
      pull: async (controller) => {
        const chunk = new Uint8Array(64 * 1024);
        const n = await this.read(chunk).catch((error) => {
          this.close();
          throw error;
        });
        if (n === null) {
          this.close();
          controller.close();
        } else controller.enqueue(chunk.subarray(0, n));
      },
      cancel: () => this.close(),
    });
  }

  /** Closes it (again is nothing). */
  close(): void {
    if (!this.#open) return;
    this.#open = false;
    closeNoWait(this.fd);
  }

  /** Closes it, as `using` does. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Deno's open, to read and write (`O_RDWR`, which waits for no FIFO, where a read-only open waits for a writer),
 * for {@linkcode openAtPathSync}: a `Deno.FsFile` is made only by Deno's open of a path, and Deno refuses the
 * checked descriptor's `/proc/self/fd/` link under every permission set, so the file to write or lock is opened
 * once by Deno and checked by what it opened, never opened again by its path after a look.
 */
function denoOpener(options: FsFileOptions): Opener<Deno.FsFile> {
  return {
    open: (path, making) =>
      Deno.openSync(path, {
        read: true,
        write: true,
        append: options.append === true,
        createNew: making === "new",
        create: making === "any",
        ...(options.mode === undefined ? {} : { mode: options.mode }),
      }),
    info: (file) => openedInfoOf(file.statSync()),
    close: (file) => file.close(),
  };
}

/** A plain file to write or lock, as a `Deno.FsFile`: opened once, no link followed unless asked. */
function openToWrite(path: string, options: FsFileOptions): Deno.FsFile {
  const { opened: file, info } = openAtPathSync(
    path,
    { follow: options.follow !== false, create: options.create === true },
    denoOpener(options),
  );
  try {
    // a hard link may be a file of the user's anywhere, which a write, a cut (or a lock) would reach
    refuseUnlessPlain(path, info, true);
    if (options.truncate) file.truncateSync(0);
    return file;
  } catch (error) {
    file.close();
    throw error;
  }
}

/** Options of a file opened as a `Deno.FsFile`: to write (or lock). */
type FsFileWanted = FsFileOptions & { write: true };

/**
 * A plain file opened without waiting and checked, for a `Deno.FsFile`'s reads: through its `/proc/self/fd/`
 * link, which names the very file checked, as a `Deno.FsFile`; where Deno may not open that link, the checked
 * descriptor itself ({@linkcode FdFile}). To write or to lock, a `Deno.FsFile` opened once by Deno, to read and
 * write (a read-only open by Deno waits for ever on a FIFO), and checked by what it opened ({@linkcode openAtPathSync}).
 *
 * @param path The file.
 * @param options {@linkcode FsFileOptions}; `follow: false` refuses a link at the path.
 * @returns The file, open to read (and write, with `write`).
 * @throws Deno.errors.NotFound when nothing is there; IrregularFile for a link not followed, or what is not a
 * plain file.
 */
export async function openFileNoWait(path: string, options: FsFileWanted): Promise<Deno.FsFile>;
export async function openFileNoWait(path: string, options?: FsFileOptions): Promise<FileReads>;
export async function openFileNoWait(
  path: string,
  options: FsFileOptions = {},
): Promise<Deno.FsFile | FileReads> {
  if (options.write === true) return openToWrite(path, options);
  const { fd } = openChecked(path, options);
  let kept = false;
  try {
    if (fdLinks) {
      try {
        return await Deno.open(`/proc/self/fd/${fd}`);
      } catch {
        fdLinks = false;
      }
    }
    kept = true;
    return new FdFile(fd);
  } finally {
    if (!kept) closeNoWait(fd);
  }
}

/** {@linkcode openFileNoWait}, synchronously. */
export function openFileNoWaitSync(path: string, options: FsFileWanted): Deno.FsFile;
export function openFileNoWaitSync(path: string, options?: FsFileOptions): FileReads;
export function openFileNoWaitSync(
  path: string,
  options: FsFileOptions = {},
): Deno.FsFile | FileReads {
  if (options.write === true) return openToWrite(path, options);
  const { fd } = openChecked(path, options);
  let kept = false;
  try {
    if (fdLinks) {
      try {
        return Deno.openSync(`/proc/self/fd/${fd}`);
      } catch {
        fdLinks = false;
      }
    }
    kept = true;
    return new FdFile(fd);
  } finally {
    if (!kept) closeNoWait(fd);
  }
}
