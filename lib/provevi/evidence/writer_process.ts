/**
 * Which process writes a run, and whether that process is still there: how a reader tells a run that is still
 * going ("running") from one whose writer died ("cut").
 *
 * The writer holds an exclusive lock on `<run folder>/.writer.lock` from the moment it opens the run until the
 * seal, which removes the file. The system drops the lock when the process ends, however it ends (SIGKILL, a
 * crash, a power loss), so a reader that can take the lock knows that the writer is gone, on any system and
 * with no more permission than reading the folder. `run_created` also records the writer in `data.writer`
 * (host and process ID), so that a person can find the process. A run folder without a lock file (a run
 * written before the lock, or on a file system without locks) cannot be told, and counts as running.
 * @module
 */
import { join } from "node:path";
import { openFileNoWait, openFileNoWaitSync } from "./fd_file.ts";

/** The lock file that a run's writer holds until the seal, in the run folder. */
export const WRITER_LOCK = ".writer.lock";

/** What `run_created` records of the process that writes the run. */
export interface WriterProcess {
  /** The host's name, or null when the process may not read it. */
  host: string | null;
  /** The process ID. */
  pid: number;
}

/** Whether a run's writer is still there. */
export type WriterState = "alive" | "gone" | "unknown";

function hostOrNull(): string | null {
  try {
    return Deno.hostname();
  } catch {
    return null;
  }
}

/**
 * This process, as a run's `run_created` records it.
 *
 * @returns The host and process ID of this process.
 * @example
 * ```ts
 * import { writerProcess } from "./writer_process.ts";
 * writerProcess(); // { host: "laptop", pid: 4242 }
 * ```
 */
export function writerProcess(): WriterProcess {
  return { host: hostOrNull(), pid: Deno.pid };
}

/**
 * Whether the process that `run_created` names as the writer is this very process. Another process cannot be
 * seen without more permissions than reading (`/proc` needs `--allow-all` in Deno, signals `--allow-run`), so
 * any other writer is `unknown`: the lock file tells ({@linkcode runWriterState}).
 *
 * @param writer The `data.writer` of a run's `run_created` event (anything: an old run has none).
 * @returns `alive` when it is this process, else `unknown`.
 * @example
 * ```ts
 * import { writerProcess, writerState } from "./writer_process.ts";
 * writerState(writerProcess()); // "alive"
 * ```
 */
export function writerState(writer: unknown): WriterState {
  if (typeof writer !== "object" || writer === null) return "unknown";
  const w = writer as Partial<Record<keyof WriterProcess, unknown>>;
  return w.pid === Deno.pid && w.host === hostOrNull() ? "alive" : "unknown";
}

/**
 * Makes and locks the writer's lock file in a run folder; the caller keeps the file open until the seal, then
 * calls {@linkcode releaseWriterLock}.
 *
 * @param folder The run folder.
 * @returns The open, locked file, or null when the folder takes no lock (a file system without locks): the
 *   run is then told by its `run_created` record alone.
 */
export function holdWriterLock(folder: string): Deno.FsFile | null {
  let file: Deno.FsFile | null = null;
  try {
    // no link followed (one planted in the run folder had the writer cut a file of the user's), no FIFO waited on
    file = openFileNoWaitSync(join(folder, WRITER_LOCK), {
      follow: false,
      write: true,
      create: true,
      truncate: true,
    });
    file.lockSync(true);
    return file;
  } catch {
    file?.close();
    return null;
  }
}

/**
 * Unlocks, closes and removes the writer's lock file.
 *
 * @param folder The run folder.
 * @param file What {@linkcode holdWriterLock} gave.
 */
export function releaseWriterLock(folder: string, file: Deno.FsFile | null): void {
  if (file === null) return;
  try {
    Deno.removeSync(join(folder, WRITER_LOCK));
  } catch { /* gone already */ }
  try {
    file.close();
  } catch { /* closed already */ }
}

/**
 * Whether the writer of an unsealed run is still there: by its lock file, else by what `run_created` records.
 *
 * @param folder The run folder, or null when the store has none here.
 * @param writer The `data.writer` of the run's `run_created` event.
 * @returns `alive`, `gone`, or `unknown` when nothing tells.
 * @example
 * ```ts
 * import { runWriterState } from "./writer_process.ts";
 * await runWriterState("/runs/run-20261130T120000Z-0badc0de", null); // "gone"
 * ```
 */
export async function runWriterState(folder: string | null, writer: unknown): Promise<WriterState> {
  if (folder !== null) {
    let file: Deno.FsFile | null = null;
    try {
      // opened once, to read and write, which waits for no FIFO, and follows no link; where this may not write
      // the lock, nothing tells (a read-only open of a FIFO renamed to the lock waited for ever)
      file = await openFileNoWait(join(folder, WRITER_LOCK), { follow: false, write: true });
      const free = await file.tryLock(false);
      if (free) return "gone";
      return "alive";
    } catch {
      /* no lock file, or no locks here */
    } finally {
      file?.close();
    }
  }
  return writerState(writer);
}
