/**
 * The committed bundle of a run: its evidence (`events.jsonl`, `payloads/`, `manifest.json`) and its `output/`,
 * put through the catalog under `run://<org>/<domain>/<env>/<run_id>` and committed, so that it has a pinned
 * version like any other catalog object. `bundle.json` in the run folder records where.
 * @module
 */
import { join } from "node:path";
import { type Catalog, childUri, parseUri } from "../../provcat/mod.ts";
import { ProveviError } from "../evidence/errors.ts";
import { evidencePaths } from "../store/file_store.ts";
import type { RunRecord } from "../evidence/record.ts";
import { type Check, check, readEventsText, recordedOutputs } from "../evidence/verify.ts";
import { sha256Hex } from "../evidence/hash.ts";

/** What `bundle.json` holds. */
export interface BundleRecord {
  /** Where the bundle was committed. */
  uri: string;
  /** The bundle's URI at its commit, or null when the store has no commits (a folder store). */
  pinned: string | null;
}

/**
 * Puts a sealed run's evidence and outputs under `uri`, commits them, and writes `bundle.json` in the run folder.
 *
 * @param catalog The catalog to commit through (its hooks see the put and the commit).
 * @param runFolder The run folder.
 * @param uri The bundle's URI, `run://<org>/<domain>/<env>/<run_id>`, without `?at=`.
 * @returns What `bundle.json` now holds; `pinned` is null when the store has no commits.
 * @throws ProveviError when the run is not sealed; the catalog's errors when it cannot put or commit.
 * @example
 * ```ts
 * import { Catalog } from "../../provcat/mod.ts";
 * import { commitBundle } from "./bundle.ts";
 * const catalog = await Catalog.open();
 * const bundle = await commitBundle(catalog, "/runs/run-1", "run://acme/demo/dev/run-1");
 * console.log(bundle.pinned); // "run://acme/demo/dev/run-1?at=commit:…"
 * ```
 */
export async function commitBundle(catalog: Catalog, runFolder: string, uri: string): Promise<BundleRecord> {
  const parsed = parseUri(uri);
  if (parsed.type !== "logical" || parsed.at) {
    throw new ProveviError(
      `cannot commit a bundle to "${uri}": use run://<org>/<domain>/<env>/<run_id>, no ?at=`,
    );
  }
  const paths = evidencePaths(runFolder);
  for (const needed of [paths.events, paths.manifest]) {
    try {
      await Deno.stat(needed);
    } catch (error) {
      throw new ProveviError(
        `cannot commit the bundle of ${runFolder}: ${needed} is missing; seal the run first`,
        {
          cause: error,
        },
      );
    }
  }
  await catalog.put(childUri(uri, "evidence"), paths.evidence);
  const output = join(runFolder, "output");
  if (await isFolder(output)) await catalog.put(childUri(uri, "output"), output);
  const runId = parsed.path[parsed.path.length - 1] ?? uri;
  const committed = await catalog.commit(uri, `evidence bundle of ${runId}`);
  const record: BundleRecord = { uri, pinned: committed.pinned };
  await Deno.writeTextFile(join(runFolder, "bundle.json"), JSON.stringify(record, null, 2) + "\n");
  return record;
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/**
 * Reads `events.jsonl` and `manifest.json` of a committed bundle through the catalog, at its pin, and compares
 * them byte for byte with the run's own.
 *
 * @param catalog The catalog that routes the bundle's URI.
 * @param record The run, as a store reads it back.
 * @param pinnedUri The bundle's URI at its commit.
 * @returns The problems found; a pin that names no commit is one.
 * @example
 * ```ts
 * import { Catalog } from "../../provcat/mod.ts";
 * import { findRun } from "./find_run.ts";
 * import { verifyBundle } from "./bundle.ts";
 * const catalog = await Catalog.open();
 * const check = await verifyBundle(catalog, await findRun("/runs/run-1"), "run://acme/demo/dev/run-1?at=commit:3f2a0c1");
 * ```
 */
export async function verifyBundle(catalog: Catalog, record: RunRecord, pinnedUri: string): Promise<Check> {
  let at;
  try {
    const parsed = parseUri(pinnedUri);
    at = parsed.type === "logical" ? parsed.at : null;
  } catch (error) {
    return check([`the bundle URI is not a catalog URI: ${(error as Error).message}`]);
  }
  if (at === null || at.kind === "branch") {
    return check([
      `the bundle URI ${pinnedUri} names no commit, so what it holds can change; pin it with ?at=commit:…`,
    ]);
  }
  const problems: string[] = [];
  const encoder = new TextEncoder();
  for (
    const [name, local] of [["events.jsonl", () => record.eventsText()], [
      "manifest.json",
      () => record.manifestText(),
    ]] as const
  ) {
    let committed: Uint8Array;
    try {
      committed = await catalog.read(childUri(pinnedUri, "evidence", name));
    } catch (error) {
      problems.push(`the committed bundle ${pinnedUri} cannot be read: ${(error as Error).message}`);
      continue;
    }
    const text = await local().catch(() => null);
    if (text === null) continue; // the evidence check reports a missing or unreadable file
    if (!sameBytes(committed, encoder.encode(text))) {
      problems.push(
        `evidence/${name} differs from the committed bundle ${pinnedUri}: the run folder was changed after the commit`,
      );
    }
  }
  // The outputs were committed beside the evidence: each must be in the bundle with the bytes its event records.
  const text = await record.eventsText().catch(() => null);
  if (text !== null && problems.length === 0) {
    for (const out of recordedOutputs(readEventsText(text).events).values()) {
      let committed: Uint8Array;
      try {
        committed = await catalog.read(childUri(pinnedUri, "output", ...out.path.split("/")));
      } catch (error) {
        problems.push(
          `output/${out.path} cannot be read from the committed bundle ${pinnedUri}: ${
            (error as Error).message
          }`,
        );
        continue;
      }
      if (sha256Hex(committed) !== out.sha256) {
        problems.push(
          `output/${out.path} in the committed bundle ${pinnedUri} is not the output the run recorded`,
        );
      }
    }
  }
  return check(problems);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
