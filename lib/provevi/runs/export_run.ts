/**
 * Copies a sealed run from one store to another, such as from the file store to a sqlite store and back:
 * the lines and payloads go through the target's writer, the seal keeps its time, and `output/`, `bundle.json`
 * and the signed seal (`evidence/attestation.dsse.json`, whose statement the copy's evidence gives byte for
 * byte) are copied. The copy is verified.
 * @module
 */
import { BUNDLE_PIN_MAX_BYTES } from "./bundle_pin.ts";
import { readCapped } from "../evidence/open_file.ts";
import { openTree, type TreeEntry } from "../evidence/open_tree.ts";
import type { VerifyRunOptions } from "./verify_run.ts";
import { join, resolve } from "node:path";
import { ProveviError } from "../evidence/errors.ts";
import { ATTESTATION_FILE } from "../evidence/attestation.ts";
import { type EvidenceEvent, payloadsOf } from "../evidence/event.ts";
import { type Manifest, MANIFEST_FORMAT_PACKED } from "../evidence/manifest.ts";
import { EVIDENCE_TEXT_MAX_BYTES, readPack } from "../evidence/payload_pack.ts";
import type { EvidenceStore, RunWriter } from "../store/store.ts";
import { readEventsText } from "../evidence/read_events.ts";
import { type RunCheck, verifyRun } from "./verify_run.ts";

/** Where {@linkcode exportRun} puts the copy. */
export interface ExportOptions {
  /** The copy's run folder; by default the run's ID under the target's runs root. */
  folder?: string;
  /** The catalog that checks the run's bundle and experiment, before and after the copy. */
  catalog?: VerifyRunOptions["catalog"];
}

/**
 * Copies a sealed run into another store and verifies the copy there.
 *
 * @param runId The run, as the source store finds it.
 * @param stores `from`, the store that holds the run; `to`, the store to copy it into.
 * @param options The copy's folder.
 * @returns The check of the copy, as {@linkcode verifyRun} gives it with the target store.
 * @throws ProveviError when the run is not sealed or does not verify, or the target already has it.
 * @example
 * ```ts
 * import { exportRun, FileStore, SqliteStore } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await using from = new FileStore({ runs: "fixtures/runs" });
 * await using to = new SqliteStore(`${dir}/evidence.db`, { runs: `${dir}/runs` });
 * const check = await exportRun("run-20261129T120000Z-0badc0de", { from, to });
 * assert.equal(check.ok, true);
 * ```
 */
export async function exportRun(
  runId: string,
  stores: { from: EvidenceStore; to: EvidenceStore },
  options: ExportOptions = {},
): Promise<RunCheck> {
  const { from, to } = stores;
  const record = await from.readRun(runId);
  const catalog = options.catalog ? { catalog: options.catalog } : {};
  const source = await verifyRun(record, { store: from, ...catalog });
  if (!source.ok) {
    throw new ProveviError(
      `run "${runId}" does not verify in ${from.uri} (${
        source.problems[0]?.message
      }); only a run that verifies is copied`,
    );
  }
  const folder = resolve(options.folder ?? join(to.runsRoot, runId));
  if (record.folder !== null && resolve(record.folder) === folder) {
    throw new ProveviError(
      `run "${runId}" would be copied onto its own folder ${folder}; give the target another runs root (--to-runs DIR)`,
    );
  }
  const manifest = JSON.parse((await record.manifestText())!) as Manifest;
  const { events, lines } = readEventsText((await record.eventsText())!);
  // A copy that fails part way is taken back whole, folder and rows, so the folder must be new.
  if (await exists(folder)) {
    throw new ProveviError(
      `run "${runId}" cannot be copied into ${folder}: the folder exists already; a copy needs a new folder`,
    );
  }
  // The copy keeps the source's layout, so that its manifest (and a signature over it) stays the same bytes.
  const payloads = manifest.format === MANIFEST_FORMAT_PACKED ? "pack" : "files";
  const writer = await to.openRun(runId, { folder, payloads });
  try {
    await copyInto(runId, { record, to, writer, folder, manifest, events, lines, catalog });
  } catch (error) {
    await takeBack(runId, { to, writer, folder, error });
  }
  // The seal comes last, once the copy is whole: it appends the run to the target's log, and a run in the log
  // is never taken back (its leaf would name a run the store no longer holds). The signature goes in with the
  // seal, so a copy that has its manifest has its signature too.
  const attestation = record.folder === null ? null : await readSignature(record.folder);
  try {
    await writer.seal({
      sealed_at: manifest.sealed_at,
      lost: manifest.lost,
      ...(attestation ? { attestation } : {}),
    });
  } catch (error) {
    if (!(await inLog(to, runId))) await takeBack(runId, { to, writer, folder, error });
    throw new ProveviError(
      `run "${runId}" was copied into ${folder} and is in the log of ${to.uri}, but its seal failed (${
        (error as Error).message
      }); the copy is kept: check it with prove verify`,
      { cause: error },
    );
  }
  return await verifyRun(await to.readRun(runId), { store: to, ...catalog });
}

/** True when the store's log holds the run (a store without a log holds none). */
async function inLog(store: EvidenceStore, runId: string): Promise<boolean> {
  if (!store.log) return false;
  return (await store.log.indexOf(runId).catch(() => null)) !== null;
}

/**
 * Takes back a copy that failed before it reached the log: the writer gives the run up unsealed (a seal would
 * append it to the log), its rows are discarded and its folder removed. Always throws: the copy's error, or why
 * the copy could not be removed.
 */
async function takeBack(
  runId: string,
  c: { to: EvidenceStore; writer: RunWriter; folder: string; error: unknown },
): Promise<never> {
  await c.writer.abandon?.().catch(() => {});
  const discard = (c.to as { discardRun?: (id: string) => Promise<void> }).discardRun;
  try {
    if (discard) await discard.call(c.to, runId);
    await Deno.remove(c.folder, { recursive: true });
  } catch (undo) {
    throw new ProveviError(
      `copying run "${runId}" failed (${
        (c.error as Error).message
      }), and its partial copy in ${c.folder} could not be removed (${
        (undo as Error).message
      }); remove it by hand`,
      { cause: c.error },
    );
  }
  throw c.error;
}

/** Copies the run's events, payloads, output and bundle into the writer, all but the seal. */
async function copyInto(
  runId: string,
  c: {
    record: Awaited<ReturnType<EvidenceStore["readRun"]>>;
    to: EvidenceStore;
    writer: RunWriter;
    folder: string;
    manifest: Manifest;
    catalog: Pick<VerifyRunOptions, "catalog">;
    events: unknown[];
    lines: string[];
  },
): Promise<void> {
  const { record, to, writer, folder, manifest, events, lines } = c;
  const put = new Set<string>();
  const putPayload = async (sha256: string) => {
    if (put.has(sha256)) return;
    const stored = await writer.putPayload(await record.payload(sha256));
    if (stored !== sha256) throw new ProveviError(`payload ${sha256} of run "${runId}" changed while copied`);
    put.add(sha256);
  };
  // The pack's records first, in their order, so that the copy's pack is the same bytes: a signed seal names
  // its digest. Each payload is then stored before any event names it, as the writer stored it.
  const pack = await record.payloadPack();
  for (const r of pack === null ? [] : readPack(pack).records) await putPayload(r.sha256);
  for (const [i, event] of events.entries()) {
    for (const sha256 of payloadsOf(event as EvidenceEvent)) await putPayload(sha256);
    await writer.append(lines[i]!, event as EvidenceEvent);
  }
  for (const p of manifest.payloads) await putPayload(p.sha256);
  if (record.folder !== null) {
    await copyTree(join(record.folder, "output"), join(folder, "output"));
    let bundle: Uint8Array | null = null;
    try {
      // read once, checked, capped: the source verified, but a link or FIFO put there since is not followed
      bundle = await readCapped(join(record.folder, "bundle.json"), BUNDLE_PIN_MAX_BYTES);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    if (bundle !== null) await Deno.writeFile(join(folder, "bundle.json"), bundle, { createNew: true });
  }
  const bundle = await readBundle(folder);
  const recordBundle =
    (to as { recordBundle?: (id: string, b: { uri: string; pinned: string }) => Promise<void> })
      .recordBundle;
  if (bundle && recordBundle) await recordBundle.call(to, runId, bundle);
}

/** The bytes of the run's signed seal, or null when it has none (the source verified, so it is a plain file). */
async function readSignature(from: string): Promise<Uint8Array | null> {
  const source = join(from, "evidence", ATTESTATION_FILE);
  try {
    if (!(await Deno.lstat(source)).isFile) return null;
    return await readCapped(source, EVIDENCE_TEXT_MAX_BYTES);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
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

/**
 * Copies a run's `output/` into a new folder. The source verified, but its folder can change since (a process the
 * run left behind): a link or a FIFO put in place of an output, or a subfolder swapped for a link to a folder of
 * the user's, is refused by the walk (`open_tree.ts`: each folder entered and checked to be the one listed, each
 * file opened once by its name there, following no link and waiting on no FIFO) and each file read by what was
 * opened.
 */
async function copyTree(from: string, to: string): Promise<void> {
  try {
    for await (const item of openTree(from, { take: refuseLink })) {
      const target = item.rel === "" ? to : join(to, ...item.rel.split("/"));
      if (item.kind === "folder") await Deno.mkdir(target, { recursive: true });
      else await Deno.writeFile(target, item.file.readable, { createNew: true });
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound && !(await exists(from))) return; // no output/
    throw error;
  }
}

function refuseLink(entry: TreeEntry): boolean {
  if (entry.look.isSymlink) throw new ProveviError(`${entry.abs} is a link; a run's output holds files`);
  return true;
}

async function readBundle(folder: string): Promise<{ uri: string; pinned: string } | null> {
  try {
    const parsed = JSON.parse(
      new TextDecoder().decode(await readCapped(join(folder, "bundle.json"), BUNDLE_PIN_MAX_BYTES)),
    );
    return typeof parsed?.uri === "string" && typeof parsed?.pinned === "string" ? parsed : null;
  } catch {
    return null;
  }
}
