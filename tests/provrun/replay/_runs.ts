/**
 * Helpers of the replay tests: a run folder copied under a new run ID with its chain made again, cut after a
 * number of events (as a killed provr leaves it: no manifest, its writer's lock file left and free), or
 * sealed again after a change to its events and payloads (a run that verifies, with another answer).
 * @module
 */
import { packedPayloads, packRecord, readPack } from "../../../lib/provevi/evidence/payload_pack.ts";
import { join } from "node:path";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import { eventLine } from "../../../lib/provevi/evidence/event.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { buildManifest, manifestText, statusOf } from "../../../lib/provevi/evidence/manifest.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { WRITER_LOCK } from "../../../lib/provevi/evidence/writer_process.ts";

let counter = 0;

/** A new run ID, later than any made today. */
export function newId(tag: string): string {
  counter += 1;
  return `run-20991231T235959Z-${tag.slice(0, 4).padEnd(4, "0")}${String(counter).padStart(4, "0")}`;
}

/** Lines for events: each chained to the line before it. */
function chained(events: EvidenceEvent[], runId: string): string[] {
  const lines: string[] = [];
  let prev: string | null = null;
  events.forEach((e, seq) => {
    const line = eventLine({ ...e, run_id: runId, seq, prev });
    lines.push(line);
    prev = sha256Hex(line);
  });
  return lines;
}

/** Copies a run's folder under a new ID: its events chained again, transformed first by `change`. */
async function copyRun(
  runs: string,
  runId: string,
  options: {
    change?: (events: EvidenceEvent[], folder: string) => Promise<EvidenceEvent[]> | EvidenceEvent[];
  },
): Promise<{ id: string; folder: string; events: EvidenceEvent[] }> {
  const id = newId("copy");
  const folder = join(runs, id);
  const out = await new Deno.Command("cp", { args: ["-r", join(runs, runId), folder] }).output();
  if (!out.success) throw new Error(`cp failed: ${new TextDecoder().decode(out.stderr)}`);
  await Deno.remove(join(folder, "evidence", "manifest.json")).catch(() => {});
  await Deno.remove(join(folder, "evidence", "attestation.dsse.json")).catch(() => {});
  await Deno.remove(join(folder, "spans.jsonl")).catch(() => {});
  const text = await Deno.readTextFile(join(folder, "evidence", "events.jsonl"));
  let events = readEventsText(text).events;
  if (options.change) events = await options.change(events, folder);
  return { id, folder, events };
}

/**
 * A copy of a run cut after `keep` events, as provr leaves a run it was killed in: no manifest, the writer's
 * lock file there and free.
 *
 * @returns The cut run's ID.
 */
export async function cutRun(runs: string, runId: string, keep: number, torn = ""): Promise<string> {
  const { id, folder, events } = await copyRun(runs, runId, {});
  const lines = chained(events.slice(0, keep), id);
  await Deno.writeTextFile(
    join(folder, "evidence", "events.jsonl"),
    lines.map((l) => l + "\n").join("") + torn,
  );
  await Deno.writeTextFile(join(folder, WRITER_LOCK), "");
  return id;
}

/**
 * A copy of a run with its events changed, chained and sealed again: a run that verifies, with the change.
 *
 * @returns The new run's ID.
 */
export async function resealed(
  runs: string,
  runId: string,
  change: (events: EvidenceEvent[], folder: string) => Promise<EvidenceEvent[]> | EvidenceEvent[],
): Promise<string> {
  const { id, folder, events } = await copyRun(runs, runId, { change });
  const lines = chained(events, id);
  await Deno.writeTextFile(join(folder, "evidence", "events.jsonl"), lines.map((l) => l + "\n").join(""));
  const payloads: { sha256: string; size: number }[] = [];
  for await (const e of Deno.readDir(join(folder, "evidence", "payloads"))) {
    payloads.push({
      sha256: e.name,
      size: (await Deno.stat(join(folder, "evidence", "payloads", e.name))).size,
    });
  }
  // A run of format 2 keeps its small payloads in payloads.pack: they are listed too, and the format kept.
  const packed = await packedPayloads(folder);
  for (const [sha256, size] of packed) payloads.push({ sha256, size });
  payloads.sort((a, b) => (a.sha256 < b.sha256 ? -1 : 1));
  const manifest = buildManifest({
    run_id: id,
    status: statusOf(events.at(-1)!),
    events: lines.length,
    last_hash: sha256Hex(lines.at(-1)!),
    payloads,
    lost: [],
    sealed_at: new Date().toISOString().replace(/\.\d+Z$/, ".000000Z"),
  }, { layout: packed.size > 0 ? "pack" : "files" });
  await Deno.writeTextFile(join(folder, "evidence", "manifest.json"), manifestText(manifest));
  return id;
}

/** Stores a payload in a run folder, by its hash. */
export async function putPayload(folder: string, text: string): Promise<string> {
  const sha = sha256Hex(text);
  await Deno.writeTextFile(join(folder, "evidence", "payloads", sha), text);
  return sha;
}

/**
 * Takes a payload out of a run folder, wherever it is: its file of `payloads/`, or its record of
 * `payloads.pack` (the pack written again without it).
 */
export async function dropPayload(folder: string, sha: string): Promise<void> {
  await Deno.remove(join(folder, "evidence", "payloads", sha)).catch(() => {});
  const path = join(folder, "evidence", "payloads.pack");
  const pack = await Deno.readFile(path).catch(() => null);
  if (pack === null) return;
  const kept = readPack(pack).records.filter((r) => r.sha256 !== sha)
    .map((r) => packRecord(r.sha256, pack.subarray(r.offset, r.offset + r.size)));
  const out = new Uint8Array(kept.reduce((n, k) => n + k.length, 0));
  kept.reduce((at, k) => (out.set(k, at), at + k.length), 0);
  await Deno.writeFile(path, out);
}
