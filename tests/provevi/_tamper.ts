/**
 * Tampering with a copy of the fixture run, for the tests of the checks and the fixtures' test vectors: change
 * lines and re-chain them, so that only the change itself is left to find.
 * @module
 */
import { join } from "node:path";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { manifestText } from "../../lib/provevi/evidence/manifest.ts";
import type { Manifest } from "../../lib/provevi/evidence/manifest.ts";
import { SAMPLE_RUN_ID } from "./_sample_run.ts";
import { copyFolder } from "../_files.ts";

/** The fixture run, sealed and verified. */
export const FIXTURE = new URL(`../../fixtures/runs/${SAMPLE_RUN_ID}`, import.meta.url).pathname;

/** The events file of a run folder. */
export const eventsPath = (folder: string) => join(folder, "evidence", "events.jsonl");
/** The manifest of a run folder. */
export const manifestPath = (folder: string) => join(folder, "evidence", "manifest.json");

/** Copies the fixture run into a fresh folder named as the run, under a temporary folder it gives too. */
export async function fixtureCopy(): Promise<{ dir: string; folder: string }> {
  const dir = await Deno.makeTempDir({ prefix: "provevi-tamper-" });
  const folder = join(dir, SAMPLE_RUN_ID);
  await copyFolder(FIXTURE, folder);
  return { dir, folder };
}

/**
 * Rewrites a run's events through `change` (each event parsed), chains them again from the start and seals the
 * manifest again, as a forger who holds the run folder can.
 */
export async function rechain(
  folder: string,
  change: (events: Record<string, unknown>[]) => Record<string, unknown>[],
  options: { patch?: (line: string, index: number) => string } = {},
): Promise<void> {
  const lines = (await Deno.readTextFile(eventsPath(folder))).trimEnd().split("\n");
  let prev: string | null = null;
  const out: string[] = [];
  for (const [i, e] of change(lines.map((l) => JSON.parse(l))).entries()) {
    const next = new EventChain(SAMPLE_RUN_ID, { seq: i, prev }).next(e as never);
    // A patch writes what no canonical line can hold (a lone surrogate), and the chain hashes it as written.
    const line = options.patch ? options.patch(next.line, i) : next.line;
    prev = sha256Hex(line);
    out.push(line);
  }
  await Deno.writeTextFile(eventsPath(folder), out.join("\n") + "\n");
  const m = JSON.parse(await Deno.readTextFile(manifestPath(folder))) as Manifest;
  m.last_hash = prev;
  m.events = out.length;
  await Deno.writeTextFile(manifestPath(folder), manifestText(m));
}
