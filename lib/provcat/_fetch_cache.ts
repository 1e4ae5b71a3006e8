/**
 * The cache of fetched fixed versions: each version of each key in a folder of its own under
 * `<cache>/fetch/<store>/<kind>-<id>/`, marked complete by a `.complete` file that holds the hash of what it
 * holds. A copy is reused only while it still hashes so, and two fetches of one version agree on one copy.
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { hashPath, holdsHash, makeReadOnly, moveAside, removeTree, tempIn, withLock } from "./_files.ts";
import type { Fetched, Pin, Route } from "./catalog_results.ts";
import type { EntryKind, StoreVersion } from "./store.ts";
import { readCapped } from "../provevi/evidence/open_file.ts";
import { RECORD_MAX_BYTES } from "./_capped_read.ts";

/** The file that marks a fetched version's cache folder as complete, with the hash of what it holds. */
const COMPLETE = ".complete";

/** One fetch of a fixed version: the URI as given, its route, its pin (with a version) and the copy's name. */
export interface VersionFetch {
  uri: string;
  route: Route;
  /** The pin; its `version` is not null. */
  pin: Pin;
  /** The name of the copy inside its folder: the key's last part, or the store's name for the store's root. */
  name: string;
}

/**
 * A record of the cache, which another process can write or swap: opened without waiting (a FIFO put there
 * never holds the fetch) or following a link, and capped; past the cap, or anything but a plain file, it throws,
 * and the record counts as missing.
 */
async function readRecord(path: string): Promise<string> {
  return new TextDecoder().decode(await readCapped(path, RECORD_MAX_BYTES));
}

/** The cache folder of one fixed version of one key. */
function fetchFolder(cache: string, route: Route, version: StoreVersion): string {
  const keyHash = createHash("sha256").update(route.key).digest("hex").slice(0, 16);
  return join(cache, "fetch", route.store.name, `${version.kind}-${version.id}`, keyHash);
}

/**
 * The kind and hash that the fetch of a fixed version recorded, without hashing anything.
 *
 * @param cache The catalog's cache root.
 * @param fetch The route and the pin (with a version).
 * @returns The recorded kind and hash, or null when no complete fetch of this kind is recorded.
 */
export async function recordedHash(
  cache: string,
  fetch: { route: Route; pin: Pin },
): Promise<{ kind: EntryKind; sha256: string } | null> {
  const { route, pin } = fetch;
  try {
    const recorded = JSON.parse(await readRecord(join(fetchFolder(cache, route, pin.version!), COMPLETE)));
    if (
      recorded.kind !== pin.kind || typeof recorded.sha256 !== "string" ||
      !/^[0-9a-f]{64}$/.test(recorded.sha256)
    ) {
      return null;
    }
    return { kind: pin.kind, sha256: recorded.sha256 };
  } catch {
    return null;
  }
}

/** The hash of a fixed version's cached copy, or null when it is missing, unfinished or changed. */
async function cachedHash(folder: string, path: string, kind: EntryKind): Promise<string | null> {
  let recorded: { kind?: unknown; sha256?: unknown };
  try {
    recorded = JSON.parse(await readRecord(join(folder, COMPLETE)));
  } catch {
    return null;
  }
  if (recorded.kind !== kind || typeof recorded.sha256 !== "string") return null;
  return await holdsHash(path, kind, recorded.sha256) ? recorded.sha256 : null;
}

/**
 * Gives a fixed version's own cache folder: the cached copy while it still hashes to what was fetched, else a
 * new copy from the store, read-only, put in place atomically.
 *
 * @param cache The catalog's cache root.
 * @param fetch The URI, its route, its pin (with a version) and the copy's name.
 * @returns The path of the copy, its kind and its SHA-256.
 */
export async function fetchVersion(cache: string, fetch: VersionFetch): Promise<Fetched> {
  const { uri, route, pin, name } = fetch;
  const folder = fetchFolder(cache, route, pin.version!);
  const path = join(folder, name);
  // A cached copy is reused only while it still hashes to what was fetched: a copy changed on disk would
  // otherwise be handed out, and snapshotted, as the pinned version.
  const cached = await cachedHash(folder, path, pin.kind);
  if (cached !== null) return { uri, pinned: pin.pinned, path, kind: pin.kind, sha256: cached };
  const work = await tempIn(join(cache, "tmp"));
  try {
    const kind = await route.store.materialize(route.key, pin.version!, join(work, name));
    await makeReadOnly(join(work, name));
    const sha256 = await hashPath(join(work, name), kind);
    await Deno.writeTextFile(
      join(work, COMPLETE),
      JSON.stringify({ pinned: pin.pinned, kind, sha256 }) + "\n",
    );
    await Deno.mkdir(join(folder, ".."), { recursive: true });
    await putInPlace(cache, { work, folder, path, kind, sha256 });
    return { uri, pinned: pin.pinned, path, kind, sha256 };
  } finally {
    await removeTree(work);
  }
}

/** Moves a finished copy to its version's folder, unless a good copy is there already. */
async function putInPlace(
  cache: string,
  copy: { work: string; folder: string; path: string; kind: EntryKind; sha256: string },
): Promise<void> {
  const { work, folder, path, kind, sha256 } = copy;
  // The rename is atomic, and fails when something is there: another fetch's copy of the same version, which
  // others may have been handed and is kept, or a copy changed on disk, which is moved aside first. The check
  // and the move are made under a lock of the folder, so that another fetch cannot put a good copy in place
  // between them, only to see it moved aside.
  try {
    await Deno.rename(work, folder);
  } catch (error) {
    if (await cachedHash(folder, path, kind) !== sha256) {
      const lock = join(
        cache,
        "locks",
        `fetch-${createHash("sha256").update(folder).digest("hex")}`,
      );
      await withLock(lock, async () => {
        for (let attempt = 0;; attempt++) {
          if (await cachedHash(folder, path, kind) === sha256) return;
          await moveAside(folder, join(cache, "tmp"));
          try {
            await Deno.rename(work, folder);
            return;
          } catch (again) {
            if (attempt >= 3) throw again ?? error;
          }
        }
      });
    }
  }
}
