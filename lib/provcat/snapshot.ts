/**
 * Snapshots: read-only, content-addressed copies at `<cache>/snapshots/<kind>/<sha256>/<name>`. The SHA-256 of
 * a file is of its bytes; of a folder, of the sorted list of its files and their hashes (see `hashFolder`).
 * Two versions with the same kind, name and content share one snapshot. A snapshot is reused only while its
 * hash still matches, and replaced otherwise.
 * @module
 */
import { join } from "node:path";
import { StatHashes } from "./stat_hashes.ts";
import {
  copyTree,
  hashFile,
  hashFolder,
  holdsHash,
  makeReadOnly,
  moveAside,
  removeTree,
  tempIn,
  withLock,
} from "./_files.ts";
import type { EntryKind } from "./store.ts";

/** A snapshot, as `Catalog.snapshot` returns it. */
export interface Snapshot {
  /** The URI that was asked for. */
  uri: string;
  /** The pinned URI it was made from, or null when the store has no commits. */
  pinned: string | null;
  /** The snapshot's path: `<cache>/snapshots/<kind>/<sha256>/<name>`. */
  path: string;
  /** The SHA-256 of the content. */
  sha256: string;
  /** `file` or `folder`. */
  kind: EntryKind;
  /** True when an existing snapshot with the same hash was reused. */
  reused: boolean;
}

/**
 * Makes or reuses the snapshot of a local file or folder.
 *
 * @param cache The cache root.
 * @param source The file or folder to copy (a fixed version's cached copy, or a folder store's own path).
 * @param options `name`: the snapshot's last path segment; `kind`: what the source is; `sha256`: the source's
 * hash when the caller has it already.
 * @returns The snapshot's path, hash and whether it was reused.
 * @example
 * ```ts ignore
 * import { materializeSnapshot } from "./snapshot.ts";
 * const made = await materializeSnapshot("/tmp/cache", "/data/revenue.csv", { name: "revenue.csv", kind: "file" });
 * ```
 */
export async function materializeSnapshot(
  cache: string,
  source: string,
  options: { name: string; kind: EntryKind; sha256?: string },
): Promise<{ path: string; sha256: string; reused: boolean }> {
  const { name, kind } = options;
  const root = join(cache, "snapshots");
  // A store without versions (a live folder) gives no hash: its files' stats tell whether the cached hashes
  // still hold, without reading them; when they do not, the copy's hash below is the source's too.
  const hashes = options.sha256 === undefined ? await StatHashes.open(cache, source) : null;
  const before = hashes ? await StatHashes.stats(source, kind) : null;
  const sha256 = options.sha256 ?? hashes!.known(before!, kind);
  if (sha256 !== null) {
    const path = join(root, kind, sha256, name);
    if (await reusable(path, kind, sha256)) {
      await hashes?.save();
      return { path, sha256, reused: true };
    }
  }
  // Copy first, then hash the copy: the address is the hash of what the snapshot holds, even if the source
  // changed meanwhile.
  const work = await tempIn(join(cache, "tmp"));
  try {
    const copy = join(work, name);
    await copyTree(source, copy, kind);
    const sums = new Map<string, string>();
    const copied = kind === "file" ? await hashFile(copy) : await hashFolder(copy, { sums });
    if (kind === "file") sums.set("", copied);
    if (hashes) {
      hashes.learn(before!, await StatHashes.stats(source, kind), sums);
      await hashes.save();
    }
    const target = join(root, kind, copied, name);
    if (await reusable(target, kind, copied)) return { path: target, sha256: copied, reused: true };
    await makeReadOnly(copy);
    await Deno.mkdir(join(root, kind, copied), { recursive: true });
    // A rename onto a path that holds nothing is atomic, and fails when another snapshot got there first: a
    // snapshot that holds its hash is never removed, since others may have been handed its path. Only one that
    // changed on disk is moved aside, and then the rename is tried again. The check and the move are made under
    // a lock of the hash, so that another task cannot put a good snapshot in place between them, only to see it
    // moved aside.
    try {
      await Deno.rename(copy, target);
    } catch (error) {
      if (await reusable(target, kind, copied)) return { path: target, sha256: copied, reused: true };
      const reused = await withLock(join(cache, "locks", `${kind}-${copied}`), async () => {
        for (let attempt = 0;; attempt++) {
          if (await reusable(target, kind, copied)) return true;
          if (await exists(target)) await moveAside(target, join(cache, "tmp"));
          try {
            await Deno.rename(copy, target);
            return false;
          } catch (again) {
            if (attempt >= 3) throw again ?? error;
          }
        }
      });
      if (reused) return { path: target, sha256: copied, reused: true };
    }
    return { path: target, sha256: copied, reused: false };
  } finally {
    await removeTree(work);
  }
}

/**
 * True when the snapshot at `path` still holds `sha256`; it is made read-only again, since a snapshot that
 * someone made writable is still handed out as a read-only one.
 */
/** The path of the snapshot of a content hash: `<cache>/snapshots/<kind>/<sha256>/<name>`. */
export function snapshotPath(cache: string, kind: EntryKind, sha256: string, name: string): string {
  return join(cache, "snapshots", kind, sha256, name);
}

/**
 * True when the snapshot at `path` exists and still hashes to `sha256`; it is made read-only again.
 * A snapshot changed on disk is not reusable.
 */
export const reusableSnapshot: (path: string, kind: EntryKind, sha256: string) => Promise<boolean> = reusable;

async function reusable(path: string, kind: EntryKind, sha256: string): Promise<boolean> {
  if (!await holdsHash(path, kind, sha256)) return false;
  try {
    await makeReadOnly(path);
  } catch (error) {
    // Moved aside by another process that found it changed: not reusable, as if it had never been there.
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
  return true;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
