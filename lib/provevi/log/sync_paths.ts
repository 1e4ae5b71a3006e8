/**
 * Fsyncs of files and folders, each opened on the calling thread and fsynced on Deno's file threads.
 * @module
 */

/**
 * Fsyncs files and folders, all at once: the disk takes them in one journal commit. Each is opened on this
 * thread (an open is quick) so that every fsync is on its way to Deno's file threads when this returns its
 * promise: an asynchronous open would first wait for a thread, then for this one, spreading the fsyncs over
 * more commits, and the caller's work meanwhile would hold them back.
 *
 * @param files Files to fsync.
 * @param dirs Folders to fsync.
 */
export async function syncPaths(files: readonly string[], dirs: readonly string[]): Promise<void> {
  const results = await Promise.allSettled([...files, ...dirs].map(syncPath));
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/**
 * Fsyncs one file or folder: opened at once on this thread, fsynced on Deno's file thread, closed after.
 *
 * @param path The file or folder.
 */
export function syncPath(path: string): Promise<void> {
  let file: Deno.FsFile;
  try {
    file = openToSync(path);
  } catch (error) {
    return Promise.reject(error);
  }
  return file.sync().catch((error) => {
    throw new Deno.errors.InvalidData(`${path} cannot be fsynced: ${(error as Error).message}`, {
      cause: error,
    });
  }).finally(() => file.close());
}

/**
 * Opens a file to fsync it to read and write, which waits for no FIFO's writer (a run's program writes its run
 * folder, and a FIFO it put in place of a payload file held a read-only open, on this thread, and the whole seal
 * with it; a FIFO's fsync then fails, and the seal with it, in one line); a folder, or a file this may not
 * write, to read.
 */
function openToSync(path: string): Deno.FsFile {
  try {
    return Deno.openSync(path, { read: true, write: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.IsADirectory || error instanceof Deno.errors.PermissionDenied)) {
      throw error;
    }
    // a FIFO made read-only is refused by its look
    const info = Deno.statSync(path);
    if (!info.isFile && !info.isDirectory) {
      throw new Deno.errors.InvalidData(`${path} is not a file or folder`);
    }
    return Deno.openSync(path, { read: true });
  }
}
