/**
 * `bundlePin`: where a run folder's `bundle.json` says its evidence was committed, read as data. The check of a
 * run (`verifyRun`) reads the pin through it; an orchestrator that commits or compares bundles itself reads it
 * the same way, with the same problems for a file that cannot say.
 * @module
 */
import { readCapped } from "../evidence/open_file.ts";
import { join } from "node:path";
import { type Problem, problem } from "../evidence/problem.ts";

/** The most a `bundle.json` holds: two URIs, a few hundred bytes; a bigger one is refused before it is read. */
export const BUNDLE_PIN_MAX_BYTES = 64 * 1024;

/** What a run folder's `bundle.json` says. */
export interface BundlePin {
  /** Where the bundle was committed, without `?at=`; null when the file names no place it can be read as. */
  uri: string | null;
  /**
   * The bundle's URI at its commit, the version to compare with; null when its store has no commits
   * (`pinned: null`, and then `uri` is set), or when the file cannot say (and `problems` says why).
   */
  pinned: string | null;
  /** Why the file cannot say: `bundle.unreadable` (not a plain file, not JSON, not an object) or `bundle.no_pin`. */
  problems: Problem[];
}

/**
 * Reads the pin of a run's committed bundle from `<folder>/bundle.json`.
 *
 * @param folder The run folder.
 * @returns The pin, or null when the folder has no `bundle.json` (the run was not committed). A file that is a
 * link, not JSON, not an object, or has no pinned URI gives a problem, not an exception.
 * @example
 * ```ts
 * import { bundlePin } from "./bundle_pin.ts";
 * const pin = await bundlePin("fixtures/runs/run-20261129T120000Z-0badc0de");
 * pin; // null: the fixture run was not committed
 * ```
 */
export async function bundlePin(folder: string): Promise<BundlePin | null> {
  const at = { file: "bundle.json" };
  const path = join(folder, "bundle.json");
  const unreadable = (why: string): BundlePin => ({
    uri: null,
    pinned: null,
    problems: [problem("bundle.unreadable", `bundle.json cannot be read: ${why}`, at)],
  });
  let parsed: unknown;
  try {
    // A link could name another run's bundle.json: the pin must be this folder's own file.
    // (a look of microseconds, most runs have none: an asynchronous one waits for a file thread)
    const info = Deno.lstatSync(path);
    if (!info.isFile) return unreadable("it is a link or not a plain file");
    parsed = JSON.parse(new TextDecoder().decode(await readCapped(path, BUNDLE_PIN_MAX_BYTES)));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    return unreadable(error instanceof SyntaxError ? "it is not JSON" : (error as Error).message);
  }
  const b = parsed as { uri?: unknown; pinned?: unknown } | null;
  if (typeof b !== "object" || b === null || Array.isArray(b)) return unreadable("it is not a JSON object");
  const uri = typeof b.uri === "string" ? b.uri : null;
  if (typeof b.pinned === "string") return { uri, pinned: b.pinned, problems: [] };
  if (b.pinned === null && uri !== null) return { uri, pinned: null, problems: [] };
  return { uri, pinned: null, problems: [problem("bundle.no_pin", "bundle.json has no pinned URI", at)] };
}
