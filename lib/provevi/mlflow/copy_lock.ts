/**
 * One copy in MLflow at a time per store: a lock file next to the store's file, or in the runs root for the
 * file store. The lock is the operating system's lock on the file, so a killed copy leaves no lock behind.
 * @module
 */
import { join } from "node:path";
import { ProveviError } from "../evidence/errors.ts";
import type { EvidenceStore } from "../store/store.ts";
import { isSqliteUri, sqlitePath } from "../store/store_uri.ts";

/**
 * The lock file of a store's copies: `<file>.mlflow-copy.lock` beside a sqlite store's file, or
 * `.mlflow-copy.lock` in the runs root of the file store.
 *
 * @param store The store.
 * @returns The lock file's path.
 * @example
 * ```ts
 * import { FileStore } from "../store/file_store.ts";
 * import { copyLockFile } from "./copy_lock.ts";
 * copyLockFile(new FileStore({ runs: "/tmp/runs" })); // "/tmp/runs/.mlflow-copy.lock"
 * ```
 */
export function copyLockFile(store: EvidenceStore): string {
  if (isSqliteUri(store.uri)) return `${sqlitePath(store.uri)}.mlflow-copy.lock`;
  return join(store.runsRoot, ".mlflow-copy.lock");
}

/**
 * Takes the store's copy lock, waiting up to `wait` milliseconds for another copy to end.
 *
 * @param store The store.
 * @param options `wait`: how long to wait for another copy (30 s by default).
 * @returns The lock; dispose of it (`using`) to let it go.
 * @throws ProveviError when another copy holds the lock for longer than `wait`.
 * @example
 * ```ts
 * import { FileStore } from "../store/file_store.ts";
 * import { takeCopyLock } from "./copy_lock.ts";
 * // using lock = await takeCopyLock(store);
 * ```
 */
export async function takeCopyLock(
  store: EvidenceStore,
  options: { wait?: number } = {},
): Promise<Disposable & { path: string }> {
  const path = copyLockFile(store);
  await Deno.mkdir(join(path, ".."), { recursive: true });
  const file = await Deno.open(path, { read: true, write: true, create: true });
  const until = Date.now() + (options.wait ?? 30_000);
  try {
    while (!(await file.tryLock(true))) {
      if (Date.now() >= until) {
        throw new ProveviError(
          `another copy into MLflow from this store holds the lock ${path}; a store makes one copy at a time: wait for it to end and copy again`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    file.close();
    throw error;
  }
  return {
    path,
    [Symbol.dispose]() {
      try {
        file.unlockSync();
      } finally {
        file.close();
      }
    },
  };
}
