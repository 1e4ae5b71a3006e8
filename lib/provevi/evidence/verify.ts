/**
 * The checks of a run's evidence and outputs. Each returns `{ ok, problems }` and prints nothing; a malformed
 * run folder is a problem, not an exception.
 * @module
 */
import { join, relative, sep } from "node:path";
import { canonicalOrNull, type EvidenceEvent, isUtcTime, payloadsOf } from "./event.ts";
import { eventWhere, isOutputPath } from "./event_rules.ts";
import { plainCanonicalText } from "./event_line.ts";
import { isSha256 } from "./hash.ts";
import { hashRegularFile } from "./hash.ts";
import { IrregularFile } from "./open_file.ts";
import {
  type Manifest,
  MANIFEST_FORMAT,
  MANIFEST_FORMAT_PACKED,
  MANIFEST_FORMATS,
  statusOf,
} from "./manifest.ts";
import { EVIDENCE_TEXT_MAX_BYTES, PACK_FILE } from "./payload_pack.ts";
import { packProblems } from "./verify_pack.ts";
import { atLine, type Problem, problem } from "./problem.ts";
import type { ProblemCode } from "./problem_codes.ts";
import { EVENTS_READ_WEIGHT, type ReadEvents, readEventsBytes, readEventsText } from "./read_events.ts";
import { jsonLineWeight } from "./json_depth.ts";
import { readLinesCapped } from "./events_file.ts";
import type { RunRecord } from "./record.ts";

/** The result of a check. */
export interface Check {
  /** True when no problem was found. */
  ok: boolean;
  /** Each problem, with its code and where it is. */
  problems: Problem[];
}

/**
 * Checks the hash chain, the sequence, the payloads and the manifest of a run.
 *
 * @param record The run, as a store reads it back.
 * @returns The problems found, each naming what and where.
 * @example
 * ```ts
 * import { FileRunRecord } from "../store/file_store.ts";
 * import { verify } from "./verify.ts";
 * const check = await verify(new FileRunRecord("run-x", "/tmp/runs/run-x"));
 * check.ok;
 * ```
 */
export async function verify(record: RunRecord): Promise<Check> {
  return check((await verifyEvidence(record)).problems);
}

/** {@linkcode verify}, also giving the events it read, for the checks that follow it. */
export async function verifyEvidence(record: RunRecord): Promise<ReadEvents> {
  // The two files are read at once; the manifest's problems are reported after the events'.
  const [found, manifestText] = await Promise.all([
    readRecordEvents(record),
    readOrProblem(() => record.manifestText()).then(weighedManifest),
  ]);
  const manifestRead = typeof manifestText === "string" ? manifestText : null;
  if (found === null || "problem" in found) return unreadEvents(found, manifestRead);
  const { read, text } = found;
  read.texts = { events: text, manifest: manifestRead };
  const problems = read.problems;
  if (read.lines.length === 0 && read.complete) {
    problems.push(
      problem("events.empty", "evidence/events.jsonl has no events: every run starts with run_created", {
        file: "events.jsonl",
      }),
    );
  }
  const first = read.events[0];
  if (first && read.eventLines[0] === 1 && first.run_id !== record.runId) {
    problems.push(problem(
      "run.id_mismatch",
      `events.jsonl line 1 (seq ${first.seq}) names run "${first.run_id}", but the run is "${record.runId}" (the name of its folder)`,
      atLine(1, first.seq),
    ));
  }
  const manifest = manifestFileProblems(manifestText, { runId: record.runId, read });
  // A pack is part of format 2 only (and of a run not sealed yet, whose format no manifest tells).
  const packed = manifest === null || manifest.format === MANIFEST_FORMAT_PACKED;
  problems.push(...await payloadProblems(record, read, { m: manifest, packed }));
  if (record.folder !== null) problems.push(...evidenceExtras(record.folder, packed));
  return read;
}

/** The read of a run whose `events.jsonl` is missing or cannot be read: that one problem. */
function unreadEvents(found: null | { problem: string }, manifestRead: string | null): ReadEvents {
  return {
    ...emptyRead(),
    problems: [
      found === null
        ? problem("events.missing", "evidence/events.jsonl is missing", { file: "events.jsonl" })
        : problem("events.unreadable", found.problem, { file: "events.jsonl" }),
    ],
    complete: false,
    texts: { events: null, manifest: manifestRead },
  };
}

/**
 * Checks `manifest.json` as read (null when missing), pushing its problems to `read.problems`; gives the
 * manifest when it is a JSON object, for the check of the payloads.
 */
function manifestFileProblems(
  manifestText: string | null | { problem: string },
  { runId, read }: { runId: string; read: ReadEvents },
): Manifest | null {
  const problems = read.problems;
  const inManifest = { file: "manifest.json" };
  if (manifestText === null) {
    problems.push(
      problem("manifest.missing", "evidence/manifest.json is missing: the run was not sealed", inManifest),
    );
    return null;
  }
  if (typeof manifestText !== "string") {
    problems.push(problem("manifest.unreadable", manifestText.problem, inManifest));
    return null;
  }
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(manifestText);
  } catch {
    problems.push(problem("manifest.not_json", "manifest.json is not JSON", inManifest));
    return null;
  }
  // JSON.parse gives null for "null": without this test a manifest of null would skip every check of it,
  // and a run cut at its end would verify.
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    problems.push(problem("manifest.not_object", "manifest.json is not a JSON object", inManifest));
    return null;
  }
  const manifest = parsed as Manifest;
  problems.push(...manifestProblems(manifest, runId, read));
  if ((plainCanonicalText(parsed) ?? canonicalOrNull(parsed)) + "\n" !== manifestText) {
    problems.push(problem(
      "manifest.not_canonical",
      "manifest.json is not in RFC 8785 canonical form with one newline at its end",
      inManifest,
    ));
  }
  return manifest;
}

function emptyRead(): ReadEvents {
  return {
    events: [],
    eventLines: [],
    lines: [],
    lineHashes: [],
    problems: [],
    complete: true,
    settled: true,
  };
}

/**
 * Reads a run's `events.jsonl`. A file that is not UTF-8 is read again as bytes, line by line, when the run has
 * a folder here, so that the problem names the line and the other lines are still checked.
 */
async function readRecordEvents(
  record: RunRecord,
): Promise<{ read: ReadEvents; text: string | null } | null | { problem: string }> {
  let text: string | null;
  try {
    text = await record.eventsText();
  } catch (error) {
    const notUtf8 = (error as Error).cause instanceof TypeError;
    if (notUtf8 && record.folder !== null) {
      try {
        const bytes = await readLinesCapped(
          join(record.folder, "evidence", "events.jsonl"),
          EVIDENCE_TEXT_MAX_BYTES,
        );
        return { read: readEventsBytes(bytes), text: null };
      } catch { /* reported below */ }
    }
    return { problem: `the evidence cannot be read: ${(error as Error).message}` };
  }
  return text === null ? null : { read: readEventsText(text), text };
}

const MANIFEST_FIELDS = [
  "format",
  "run_id",
  "status",
  "events",
  "last_hash",
  "payloads",
  "payload_bytes",
  "lost",
  "sealed_at",
];

function manifestProblems(m: Manifest, runId: string, read: ReadEvents): Problem[] {
  const problems: Problem[] = [];
  const push: Push = (code, message) => void problems.push(problem(code, message, { file: "manifest.json" }));
  for (const key of Object.keys(m)) {
    if (!MANIFEST_FIELDS.includes(key)) {
      push("manifest.unknown_field", `manifest.json has an unknown field "${key}"`);
    }
  }
  const missing = MANIFEST_FIELDS.filter((k) => !(k in m));
  for (const key of missing) push("manifest.missing_field", `manifest.json lacks the field "${key}"`);
  const has = (k: string) => !missing.includes(k);
  if (has("sealed_at") && !isUtcTime(m.sealed_at)) {
    push(
      "manifest.sealed_at",
      `manifest.json has sealed_at ${JSON.stringify(m.sealed_at)}, not a real UTC RFC 3339 time`,
    );
  }
  if (has("format") && !MANIFEST_FORMATS.includes(m.format)) {
    push(
      "manifest.format",
      `manifest.json has format ${
        JSON.stringify(m.format)
      }, not ${MANIFEST_FORMAT} or ${MANIFEST_FORMAT_PACKED}`,
    );
  }
  if (has("run_id") && m.run_id !== runId) {
    push("manifest.run_id", `manifest.json names run ${JSON.stringify(m.run_id)}, but the run is "${runId}"`);
  }
  // Events that cannot be read at all (a link, a file that cannot be opened) have their own problem.
  const unread = (read.lines.length === 0 && !read.complete) || !read.settled;
  if (has("events") && !unread && m.events !== read.lines.length) {
    push(
      "manifest.count",
      `manifest.json counts ${
        JSON.stringify(m.events)
      } events, but events.jsonl has ${read.lines.length} lines`,
    );
  }
  const last = read.lineHashes.length ? read.lineHashes[read.lineHashes.length - 1]! : null;
  if (has("last_hash") && !unread && m.last_hash !== last) {
    push(
      "manifest.last_hash",
      `manifest.json has last_hash ${m.last_hash}, but the last line of events.jsonl hashes to ${last}`,
    );
  }
  // The status follows from the last line; when that line cannot be read, its problem is the cause.
  const lastParsed = read.eventLines[read.eventLines.length - 1] === read.lines.length;
  const status = statusOf(lastParsed ? read.events[read.events.length - 1]! : null);
  if (has("status") && !unread && (lastParsed || read.lines.length === 0) && m.status !== status) {
    push("manifest.status", `manifest.json has status ${m.status}, but the events end as ${status}`);
  }
  if (has("lost")) lostProblems(m.lost, push);
  if (has("payloads")) payloadListProblems(m, { withBytes: has("payload_bytes"), push });
  return problems;
}

type Push = (code: ProblemCode, message: string) => void;

/** The manifest's `lost` list: each entry exactly a type, a UTC time and an error. */
function lostProblems(lost: unknown, push: Push): void {
  if (!Array.isArray(lost)) return push("manifest.lost", "manifest.json lost is not a list");
  for (const [i, l] of (lost as unknown[]).entries()) {
    const e = l as Record<string, unknown> | null;
    if (
      typeof e !== "object" || e === null || Array.isArray(e) ||
      Object.keys(e).length !== 3 || typeof e.type !== "string" || typeof e.error !== "string" ||
      !isUtcTime(e.time)
    ) push("manifest.lost", `manifest.json lost[${i}] is not exactly a type, a UTC time and an error`);
  }
}

/** The manifest's `payloads` list: its entries, their order, and their sum against `payload_bytes`. */
function payloadListProblems(m: Manifest, { withBytes, push }: { withBytes: boolean; push: Push }): void {
  if (!Array.isArray(m.payloads)) {
    return push("manifest.payload_entry", "manifest.json payloads is not a list");
  }
  let bytes = 0;
  let previous = "";
  let unsorted = false;
  for (const [i, p] of m.payloads.entries()) {
    if (
      typeof p !== "object" || p === null || Object.keys(p).length !== 2 || !isSha256(p.sha256) ||
      !Number.isSafeInteger(p.size) || p.size < 0
    ) {
      push("manifest.payload_entry", `manifest.json payloads[${i}] is not exactly a SHA-256 and a size`);
      continue;
    }
    // Sorted and once each, as the format says: a payload listed twice could carry two sizes, and the
    // check of its file would see only one of them.
    if (p.sha256 === previous) {
      push("manifest.payload_twice", `manifest.json lists payload ${p.sha256} twice`);
    } else if (p.sha256 < previous && !unsorted) {
      unsorted = true;
      push(
        "manifest.payload_order",
        `manifest.json payloads[${i}] is out of order: the payloads are sorted by sha256`,
      );
    }
    previous = p.sha256;
    bytes += p.size;
  }
  if (withBytes && m.payload_bytes !== bytes) {
    push(
      "manifest.payload_bytes",
      `manifest.json has payload_bytes ${
        JSON.stringify(m.payload_bytes)
      }, but its payloads add up to ${bytes}`,
    );
  }
}

async function payloadProblems(
  record: RunRecord,
  read: ReadEvents,
  { m, packed }: { m: Manifest | null; packed: boolean },
): Promise<Problem[]> {
  const problems: Problem[] = [];
  const listed = new Map<string, number>();
  if (m && Array.isArray(m.payloads)) {
    for (const p of m.payloads) if (p && isSha256(p.sha256)) listed.set(p.sha256, p.size);
  }
  let names: string[] = [];
  try {
    names = await record.payloadNames();
  } catch (error) {
    problems.push(
      problem("payloads.unreadable", `payloads/ cannot be read: ${(error as Error).message}`, {
        file: "payloads",
      }),
    );
  }
  const present = new Set(names);
  for (const name of names) {
    if (!listed.has(name) && m) {
      problems.push(
        problem("payload.unlisted", `payloads/${name} is not in the manifest's payload list`, {
          file: `payloads/${name}`,
        }),
      );
    }
  }
  const inPack = packed ? await packProblems(record, { listed, files: present, m, problems }) : new Set();
  for (const [sha256, size] of listed) {
    if (inPack.has(sha256)) continue; // checked with the pack
    const found = await listedPayloadProblem(record, { sha256, size, present, packed });
    if (found) problems.push(found);
  }
  read.events.forEach((event, i) => {
    const where = eventWhere(event, read.eventLines[i]!);
    const place = atLine(read.eventLines[i]!, event.seq);
    for (const sha256 of payloadsOf(event)) {
      // A value that is not a SHA-256 is a problem of the event's form (eventDataProblems).
      if (!isSha256(sha256)) continue;
      if (m && !listed.has(sha256)) {
        problems.push(
          problem(
            "payload.event_unlisted",
            `${where} names payload ${sha256}, which the manifest does not list`,
            place,
          ),
        );
      } else if (!m && !present.has(sha256) && !inPack.has(sha256)) {
        problems.push(
          problem("payload.event_unlisted", `${where} names payload ${sha256}, which is missing`, place),
        );
      }
    }
  });
  return problems;
}

/** The problem of one payload the manifest lists, against its file: missing, unreadable, changed or resized. */
async function listedPayloadProblem(
  record: RunRecord,
  { sha256, size, present, packed }: { sha256: string; size: number; present: Set<string>; packed: boolean },
): Promise<Problem | null> {
  const file = { file: `payloads/${sha256}` };
  const missing = `payloads/${sha256} is missing${
    packed ? `, and ${PACK_FILE} has no whole record of it` : ""
  }`;
  if (!present.has(sha256)) return problem("payload.missing", missing, file);
  let info;
  try {
    info = await record.payloadInfo(sha256);
  } catch (error) {
    return problem(
      "payload.unreadable",
      `payloads/${sha256} cannot be read: ${(error as Error).message}`,
      file,
    );
  }
  if (info === null) return problem("payload.missing", missing, file);
  if (info.sha256 !== sha256) {
    return problem(
      "payload.hash_mismatch",
      `payloads/${sha256} was changed: its bytes hash to ${info.sha256}`,
      file,
    );
  }
  if (info.size !== size) {
    return problem(
      "payload.size",
      `payloads/${sha256} has ${info.size} bytes, but the manifest says ${JSON.stringify(size)}`,
      file,
    );
  }
  return null;
}

/** One output that a run recorded, from its `output_artifact_created` event. */
export interface RecordedOutput {
  path: string;
  sha256: string;
  size: number;
}

/**
 * The outputs a run's events record, by their path under `output/`.
 * @param events The run's events.
 */
export function recordedOutputs(events: readonly EvidenceEvent[]): Map<string, RecordedOutput> {
  const outputs = new Map<string, RecordedOutput>();
  for (const e of events) {
    if (e.type !== "output_artifact_created") continue;
    const { path, sha256, size } = e.data as { path?: unknown; sha256?: unknown; size?: unknown };
    // The first record of a path counts; a second is a problem of its own (outputRecordProblems).
    if (
      isOutputPath(path) && isSha256(sha256) && Number.isSafeInteger(size) && (size as number) >= 0 &&
      !outputs.has(path)
    ) {
      outputs.set(path, { path, sha256, size: size as number });
    }
  }
  return outputs;
}

/**
 * Checks that `output/` holds exactly the outputs the events record, byte for byte. Its folders are only the
 * paths of its files: an empty one is not evidence (no bundle store keeps it, no statement names it).
 *
 * @param folder The run folder.
 * @param events The run's events.
 * @param options `complete: false` when some lines of `events.jsonl` could not be read: a file that no event
 *   read records is then not reported, since the lost line may be the one that records it.
 * @returns The problems found.
 * @example
 * ```ts
 * import { verifyOutputs } from "./verify.ts";
 * const check = await verifyOutputs("/tmp/runs/run-x", []);
 * ```
 */
export async function verifyOutputs(
  folder: string,
  events: EvidenceEvent[],
  options: { complete?: boolean } = {},
): Promise<Check> {
  const problems: Problem[] = [];
  const recorded = recordedOutputs(events);
  const root = join(folder, "output");
  const found = new Map<string, string>();
  try {
    // A link as output/ itself would have the walk check another folder's files as this run's.
    // (a look of microseconds, made in turn: an asynchronous one waits for a file thread on a busy machine)
    if (Deno.lstatSync(root).isSymlink) throw new LinkedOutput();
    await walk(root, root, { found, problems });
  } catch (error) {
    if (error instanceof LinkedOutput) {
      problems.push(problem("output.unreadable", "output/ is a link, not a folder", { file: "output" }));
    } else if (!(error instanceof Deno.errors.NotFound)) {
      problems.push(
        problem("output.unreadable", `output/ cannot be read: ${(error as Error).message}`, {
          file: "output",
        }),
      );
    }
  }
  const complete = options.complete !== false;
  for (const [path, full] of found) {
    const file = { file: `output/${path}` };
    const want = recorded.get(path);
    if (!want) {
      if (complete) {
        problems.push(problem("output.unrecorded", `output/${path} is not a recorded output`, file));
      }
      continue;
    }
    let info;
    try {
      // No more is read than the record says: a file that holds more (a sparse one can claim any size) was
      // hashed whole, for as long as it claimed; and a FIFO swapped in after the listing held the open.
      const size = (await Deno.lstat(full)).size;
      if (size > want.size) {
        problems.push(problem(
          "output.changed",
          `output/${path} was changed: it holds ${size} bytes, recorded ${want.sha256} (${want.size} bytes)`,
          file,
        ));
        continue;
      }
      info = await hashRegularFile(full, want.size);
    } catch (error) {
      const grew = error instanceof IrregularFile && error.reason.startsWith("holds more than");
      problems.push(
        grew
          ? problem(
            "output.changed",
            `output/${path} was changed: it ${(error as IrregularFile).reason}`,
            file,
          )
          : problem("output.unreadable", `output/${path} cannot be read: ${(error as Error).message}`, file),
      );
      continue;
    }
    if (info.sha256 !== want.sha256 || info.size !== want.size) {
      problems.push(problem(
        "output.changed",
        `output/${path} was changed: it hashes to ${info.sha256} (${info.size} bytes), recorded ${want.sha256} (${want.size} bytes)`,
        file,
      ));
    }
  }
  for (const path of recorded.keys()) {
    if (!found.has(path)) {
      problems.push(
        problem("output.missing", `output/${path} is recorded but missing`, { file: `output/${path}` }),
      );
    }
  }
  return check(problems);
}

async function walk(
  root: string,
  dir: string,
  into: { found: Map<string, string>; problems: Problem[] },
): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    const full = join(dir, entry.name);
    const path = relative(root, full).split(sep).join("/");
    const file = { file: `output/${path}` };
    if (entry.isSymlink) {
      into.problems.push(problem("output.not_plain", `output/${path} is a link, not a file`, file));
    } else if (entry.isDirectory) await walk(root, full, into);
    else if (entry.isFile) into.found.set(path, full);
    // A named pipe or a device: hashing it could wait for ever.
    else into.problems.push(problem("output.not_plain", `output/${path} is not a plain file`, file));
  }
}

class LinkedOutput extends Error {}

/** The names that `evidence/` may hold (docs/evidence-format.md, "The run folder"). */
const EVIDENCE_NAMES = ["events.jsonl", "manifest.json", "payloads", "attestation.dsse.json"];

/**
 * Anything in `evidence/` that the format does not name: the bundle and the signed statement cover only the
 * named files, so another file there would ride along unchecked. `payloads.pack` is named in format 2 only.
 */
function evidenceExtras(folder: string, packed: boolean): Problem[] {
  const problems: Problem[] = [];
  try {
    // A listing of a few names, read in turn: an asynchronous one waits for a file thread.
    for (const entry of Deno.readDirSync(join(folder, "evidence"))) {
      if (EVIDENCE_NAMES.includes(entry.name) || (packed && entry.name === PACK_FILE)) continue;
      problems.push(problem(
        "evidence.extra",
        `evidence/${entry.name} is not part of the evidence format (events.jsonl, manifest.json, payloads/, attestation.dsse.json${
          packed ? ", payloads.pack" : ""
        })`,
        { file: entry.name },
      ));
    }
  } catch { /* a missing or linked evidence/ is the problem of events.jsonl */ }
  return problems.sort((a, b) => (a.file! < b.file! ? -1 : 1));
}

/**
 * The manifest's text, unless it would take more of the heap parsed than {@linkcode EVENTS_READ_WEIGHT}: a manifest
 * of many small values (`{"lost":[{},{},…]}`, under 512 MiB) took the check some 30 times its text, parsed whole.
 */
function weighedManifest(text: string | null | { problem: string }): string | null | { problem: string } {
  if (typeof text !== "string" || jsonLineWeight(text) <= EVENTS_READ_WEIGHT) return text;
  return {
    problem: `manifest.json would take more than ${EVENTS_READ_WEIGHT} bytes of memory read: it is not read`,
  };
}

async function readOrProblem(
  read: () => Promise<string | null>,
): Promise<string | null | { problem: string }> {
  try {
    return await read();
  } catch (error) {
    return { problem: `the evidence cannot be read: ${(error as Error).message}` };
  }
}

/** Makes a {@linkcode Check} from a list of problems. */
export function check(problems: Problem[]): Check {
  return { ok: problems.length === 0, problems };
}
