/**
 * The committed bundle of a run: its evidence (`events.jsonl`, `payloads/`, `manifest.json`) and its `output/`,
 * put through the catalog under `run://<org>/<domain>/<env>/<run_id>` and committed, so that it has a pinned
 * version like any other catalog object. `bundle.json` in the run folder records where.
 * @module
 */
import { replaceFile } from "../evidence/replace_file.ts";
import { readCapped } from "../evidence/open_file.ts";
import { EVIDENCE_TEXT_MAX_BYTES, PACK_FILE } from "../evidence/payload_pack.ts";
import { join } from "node:path";
import type { Catalog } from "../../provcat/mod.ts";
import { parseUri } from "../../provcat/uri.ts";
import { childUri } from "../../provcat/uri.ts";
import { ProveviError } from "../evidence/errors.ts";
import { evidencePaths } from "../store/file_store.ts";
import type { RunRecord } from "../evidence/record.ts";
import { Buffer } from "node:buffer";
import { readEventsText } from "../evidence/read_events.ts";
import { type Check, check, recordedOutputs } from "../evidence/verify.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import { sha256Hex } from "../evidence/hash.ts";
import { type Problem, problem } from "../evidence/problem.ts";
import type { ProblemCode } from "../evidence/problem_codes.ts";
import { proofProvesRun, readRunLogFiles } from "../log/run_in_log.ts";
import { PROOF_FILE } from "../log/tlog_proof.ts";

/** What `bundle.json` holds. */
export interface BundleRecord {
  /** Where the bundle was committed. */
  uri: string;
  /** The bundle's URI at its commit, or null when the store has no commits (a folder store). */
  pinned: string | null;
}

/**
 * Puts a sealed run's evidence, outputs and proof that it is in its store's log (`log.tlog-proof`, when the run
 * has one) under `uri`, commits them, and writes `bundle.json` in the run folder.
 *
 * @param catalog The catalog to commit through (its hooks see the put and the commit).
 * @param runFolder The run folder.
 * @param uri The bundle's URI, `run://<org>/<domain>/<env>/<run_id>`, without `?at=`.
 * @returns What `bundle.json` now holds; `pinned` is null when the store has no commits.
 * @throws ProveviError when the run is not sealed; the catalog's errors when it cannot put or commit.
 * @example
 * ```ts
 * import { Catalog, commitBundle, RunFile, runFile } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const lake = await Deno.makeTempDir();
 * await new Deno.Command("git", { args: ["init", "-q", "-b", "main", lake] }).output();
 * await using catalog = await Catalog.open({
 *   config: {
 *     cache: `${lake}/.cache`,
 *     stores: { lake: { type: "git", path: lake } },
 *     routes: [{ prefix: "run://acme/demo/dev", store: "lake", path: "runs" }, {
 *       prefix: "experiment://acme/demo/dev", store: "lake", path: "experiments" }],
 *   },
 * });
 * const runs = await Deno.makeTempDir();
 * const { runId, folder } = await runFile(RunFile.parse(`
 * run: { org: acme, domain: demo, env: dev }
 * agent: { name: hello, backend: call, model: "test:", script: { model: echo-1, turns: [{ text: Hello. }] } }
 * prompt: Say hello.
 * `), { runs });
 * const bundle = await commitBundle(catalog, folder, `run://acme/demo/dev/${runId}`);
 * assert.match(bundle.pinned!, /\?at=commit:[0-9a-f]{40}$/);
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
  // The run's proof that it is in its store's log, so that the bundle alone is checked offline (check 10).
  const { proofText } = await readRunLogFiles(runFolder);
  if (proofText !== null) await catalog.put(childUri(uri, PROOF_FILE), new TextEncoder().encode(proofText));
  const runId = parsed.path[parsed.path.length - 1] ?? uri;
  const committed = await catalog.commit(uri, `evidence bundle of ${runId}`);
  const record: BundleRecord = { uri, pinned: committed.pinned };
  await replaceFile(join(runFolder, "bundle.json"), JSON.stringify(record, null, 2) + "\n");
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

/** The file that holds a run's signed statement, beside the events (`docs/evidence-format.md`). */
const ATTESTATION = "attestation.dsse.json";

/**
 * Compares a committed bundle with the run, whole: the bundle at its pinned commit must hold exactly the
 * folder's evidence (`events.jsonl`, `manifest.json`, each payload under `payloads/`, and the attestation when
 * the folder has one) with the same bytes, and exactly the outputs the events record (`output/<path>`), each
 * with its recorded hash, and may hold `log.tlog-proof`, which must prove that this run is in the log. Nothing
 * else may lie in it.
 *
 * @param catalog The catalog that routes the bundle's URI.
 * @param record The run, as a store reads it back.
 * @param pinnedUri The bundle's URI at its commit: `run://<org>/<domain>/<env>/<run_id>?at=commit:<id>`.
 * @param options `complete: false` when some event lines cannot be read: the outputs are then not compared,
 *   since the lost lines may record some. `read`: the texts of `events.jsonl` and `manifest.json` and the events
 *   as the evidence check read them (`verifyEvidence`), so that the run's evidence is not read and parsed again.
 * @returns The problems found; a pin that names no commit is one.
 * @example
 * ```ts ignore
 * import { Catalog } from "../../provcat/mod.ts";
 * import { findRun } from "./find_run.ts";
 * import { verifyBundle } from "./bundle.ts";
 * const catalog = await Catalog.open();
 * const check = await verifyBundle(catalog, await findRun("/runs/run-1"), "run://acme/demo/dev/run-1?at=commit:3f2a0c1");
 * ```
 */
export async function verifyBundle(
  catalog: Catalog,
  record: RunRecord,
  pinnedUri: string,
  options: {
    complete?: boolean;
    read?: { events: readonly EvidenceEvent[]; texts: { events: string | null; manifest: string | null } };
  } = {},
): Promise<Check> {
  const refused = pinProblem(pinnedUri, record.runId);
  if (refused !== null) return check([refused]);
  const where = `the committed bundle ${pinnedUri}`;
  let files: Map<string, string>;
  try {
    files = await listFiles(catalog, pinnedUri, "");
  } catch (error) {
    return check([problem("bundle.unreachable", `${where} cannot be read: ${(error as Error).message}`)]);
  }
  const problems: Problem[] = [];
  const push = (code: ProblemCode, path: string, message: string) =>
    problems.push(problem(code, message, { file: path.replace(/^evidence\//, "") }));
  const read = async (path: string): Promise<Uint8Array | null> => {
    try {
      return await catalog.read(files.get(path)!);
    } catch (error) {
      push(
        "bundle.file_unreadable",
        path,
        `${path} cannot be read from ${where}: ${(error as Error).message}`,
      );
      return null;
    }
  };
  const c: Compared = { record, given: options.read, files, read, push, where, expected: new Set() };
  await compareEvidence(c);
  await comparePayloads(c);
  const outputsKnown = await compareOutputs(c, options.complete !== false);
  if (files.has(PROOF_FILE)) {
    c.expected.add(PROOF_FILE);
    await checkBundledProof(c);
  }
  for (const path of files.keys()) {
    if (c.expected.has(path)) continue;
    if (path.startsWith("output/") && !outputsKnown) continue;
    push(
      "bundle.file_extra",
      path,
      path.startsWith("output/")
        ? `${path} in ${where} is not a recorded output`
        : `${path} in ${where} is not part of the run's evidence`,
    );
  }
  return check(problems);
}

/** What the comparisons of a bundle with its run share. */
interface Compared {
  record: RunRecord;
  /** The run's texts and events, as the evidence check read them; undefined to read them here. */
  given:
    | { events: readonly EvidenceEvent[]; texts: { events: string | null; manifest: string | null } }
    | undefined;
  /** The bundle's files, by their path below the bundle, with their URIs. */
  files: Map<string, string>;
  /** Reads a file of the bundle; null (and a problem) when it cannot. */
  read(path: string): Promise<Uint8Array | null>;
  push(code: ProblemCode, path: string, message: string): void;
  where: string;
  /** The paths that belong in the bundle, as the comparisons find them. */
  expected: Set<string>;
}

/** The problem of a pinned bundle URI that is not one, names no commit, or is another run's; else null. */
function pinProblem(pinnedUri: string, runId: string): Problem | null {
  let parsed;
  try {
    parsed = parseUri(pinnedUri);
  } catch (error) {
    return problem(
      "bundle.other_run",
      `bundle.json names ${pinnedUri}, which is not a catalog URI: ${(error as Error).message}`,
      { file: "bundle.json" },
    );
  }
  if (parsed.type !== "logical" || parsed.at?.kind !== "commit") {
    return problem(
      "bundle.no_commit",
      `the bundle URI ${pinnedUri} names no commit, so what it holds can change; pin it with ?at=commit:…`,
      { file: "bundle.json" },
    );
  }
  if (parsed.path[parsed.path.length - 1] !== runId) {
    return problem("bundle.other_run", `the bundle URI ${pinnedUri} is not the bundle of run "${runId}"`, {
      file: "bundle.json",
    });
  }
  return null;
}

/** `events.jsonl`, `manifest.json` and the attestation: the bundle's bytes must be the folder's. */
async function compareEvidence(c: Compared): Promise<void> {
  const { record, given, files } = c;
  const encoder = new TextEncoder();
  const local: [string, () => Promise<Uint8Array | null>][] = [
    [
      "evidence/events.jsonl",
      async () => bytesOf(given ? given.texts.events : await record.eventsText(), encoder),
    ],
    [
      "evidence/manifest.json",
      async () => bytesOf(given ? given.texts.manifest : await record.manifestText(), encoder),
    ],
  ];
  // the pack of a run of format 2 is compared byte for byte, as the other files are
  local.push([`evidence/${PACK_FILE}`, () => record.payloadPack()]);
  if (record.folder !== null) {
    const folder = record.folder;
    local.push([`evidence/${ATTESTATION}`, () => readIfPresent(join(folder, "evidence", ATTESTATION))]);
  }
  for (const [path, get] of local) {
    // A file the folder lacks or cannot read is the evidence check's problem; the bundle must then lack it too.
    const mine = await get().catch(() => undefined);
    if (mine === undefined || mine === null) continue;
    c.expected.add(path);
    if (!files.has(path)) {
      c.push("bundle.file_missing", path, `${path} is missing from ${c.where}`);
      continue;
    }
    const committed = await c.read(path);
    if (committed !== null && !sameBytes(committed, mine)) {
      c.push(
        "bundle.file_differs",
        path,
        `${path} differs from ${c.where}: the run folder was changed after the commit`,
      );
    }
  }
}

/** Each payload of the folder must be in the bundle with the bytes its name is the hash of. */
async function comparePayloads(c: Compared): Promise<void> {
  let payloads: string[] = [];
  try {
    payloads = await c.record.payloadNames();
  } catch { /* the evidence check reports it */ }
  for (const name of payloads) {
    const path = `evidence/payloads/${name}`;
    c.expected.add(path);
    if (!c.files.has(path)) {
      c.push("bundle.file_missing", path, `${path} is missing from ${c.where}`);
      continue;
    }
    const committed = await c.read(path);
    // The folder's payload is checked against its name by the evidence check; same name, same hash, same bytes.
    if (committed !== null && sha256Hex(committed) !== name) {
      c.push(
        "bundle.file_differs",
        path,
        `${path} in ${c.where} was changed: its bytes hash to ${sha256Hex(committed)}`,
      );
    }
  }
}

/**
 * Each output the events record must be in the bundle with its recorded hash and size.
 * @returns Whether the outputs are known (every event line read), so that another output is an extra file.
 */
async function compareOutputs(c: Compared, complete: boolean): Promise<boolean> {
  const text = c.given ? c.given.texts.events : await c.record.eventsText().catch(() => null);
  if (text === null || !complete) return false;
  const events = c.given ? c.given.events : readEventsText(text).events;
  for (const out of recordedOutputs(events).values()) {
    const path = `output/${out.path}`;
    c.expected.add(path);
    if (!c.files.has(path)) {
      c.push("bundle.file_missing", path, `${path} is recorded, but missing from ${c.where}`);
      continue;
    }
    const committed = await c.read(path);
    if (committed !== null && (sha256Hex(committed) !== out.sha256 || committed.length !== out.size)) {
      c.push("bundle.file_differs", path, `${path} in ${c.where} is not the output the run recorded`);
    }
  }
  return true;
}

/**
 * A bundle's `log.tlog-proof` must prove that this run, as its evidence is, is in the log; it may be another
 * proof than the folder's (`prove log wait` writes a witnessed one later), and its signatures are check 10's.
 */
async function checkBundledProof(c: Compared): Promise<void> {
  const manifestText = c.given ? c.given.texts.manifest : await c.record.manifestText().catch(() => null);
  const bytes = await c.read(PROOF_FILE);
  if (manifestText === null || bytes === null) return; // the evidence check, or the read, reports it
  const attestation = c.record.folder === null
    ? null
    : await readIfPresent(join(c.record.folder, "evidence", ATTESTATION)).catch(() => null);
  if (!proofProvesRun(new TextDecoder().decode(bytes), { manifestText, attestation })) {
    c.push(
      "bundle.file_differs",
      PROOF_FILE,
      `${PROOF_FILE} in ${c.where} does not prove that this run, as its evidence is, is in the log`,
    );
  }
}

/** Every file under a folder of the catalog, by its path below `uri`, with its URI. */
async function listFiles(catalog: Catalog, uri: string, prefix: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const listing = await catalog.list(prefix === "" ? uri : childUri(uri, ...prefix.split("/")));
  for (const entry of listing.entries) {
    const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.kind === "folder") {
      for (const [p, u] of await listFiles(catalog, uri, path)) files.set(p, u);
    } else files.set(path, childUri(uri, ...path.split("/")));
  }
  return files;
}

function bytesOf(text: string | null, encoder: TextEncoder): Uint8Array | null {
  return text === null ? null : encoder.encode(text);
}

async function readIfPresent(path: string): Promise<Uint8Array | null> {
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile) return null;
    return await readCapped(path, EVIDENCE_TEXT_MAX_BYTES);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}
