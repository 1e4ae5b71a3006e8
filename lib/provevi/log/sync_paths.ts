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
    file = Deno.openSync(path, { read: true });
  } catch (error) {
    return Promise.reject(error);
  }
  return file.sync().finally(() => file.close());
}
