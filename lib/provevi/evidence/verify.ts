/**
 * The checks of a run's evidence and outputs. Each returns `{ ok, problems }` and prints nothing; a malformed
 * run folder is a problem, not an exception.
 * @module
 */
import { join, relative, sep } from "node:path";
import { eventLine, eventProblems, type EvidenceEvent, payloadsOf } from "./event.ts";
import { isSha256, sha256File, sha256Hex } from "./hash.ts";
import canonicalize from "canonicalize";
import { type Manifest, MANIFEST_FORMAT, statusOf } from "./manifest.ts";
import type { RunRecord } from "./record.ts";

/** The result of a check. */
export interface Check {
  /** True when no problem was found. */
  ok: boolean;
  /** One line per problem, naming what and where. */
  problems: string[];
}

/** The events of a run as a check reads them, with the problems of reading them. */
export interface ReadEvents {
  events: EvidenceEvent[];
  lines: string[];
  problems: string[];
}

/**
 * Parses the text of `events.jsonl`, checking each line's form, sequence, run ID and chain.
 *
 * @param text The file's text.
 * @returns The events that parsed, their lines, and every problem found.
 */
export function readEventsText(text: string): ReadEvents {
  const problems: string[] = [];
  const events: EvidenceEvent[] = [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  else if (lines.length > 0) {
    problems.push(`events.jsonl line ${lines.length} has no newline at its end: the file was cut part way`);
  }
  let prevLine: string | null = null;
  let runId: string | null = null;
  lines.forEach((line, index) => {
    const where = `events.jsonl line ${index + 1}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      problems.push(`${where} is not JSON`);
      prevLine = line;
      return;
    }
    const shape = eventProblems(parsed);
    if (shape.length) {
      problems.push(`${where} is not an event: it ${shape.join("; ")}`);
      prevLine = line;
      return;
    }
    const event = parsed as EvidenceEvent;
    if (eventLine(event) !== line) {
      problems.push(`${where} (seq ${event.seq}) is not in RFC 8785 canonical form`);
    }
    if (event.seq !== index) problems.push(`${where} has seq ${event.seq}, expected ${index}`);
    runId ??= event.run_id;
    if (event.run_id !== runId) {
      problems.push(`${where} (seq ${event.seq}) belongs to run "${event.run_id}", not "${runId}"`);
    }
    const expected = prevLine === null ? null : sha256Hex(prevLine);
    if (event.prev !== expected) {
      problems.push(
        index === 0
          ? `${where} (seq ${event.seq}) has prev ${event.prev}, but the first event's prev is null`
          : `${where} (seq ${event.seq}) has prev ${event.prev}, but line ${index} hashes to ${expected}`,
      );
    }
    events.push(event);
    prevLine = line;
  });
  problems.push(...orderProblems(events));
  return { events, lines, problems };
}

/**
 * The order every run keeps: `run_created` first, and at most one ending event (`run_completed` or
 * `run_failed`), which is the last. A chain rewritten after the end cannot hide events behind it.
 */
function orderProblems(events: EvidenceEvent[]): string[] {
  const problems: string[] = [];
  if (events.length && events[0]!.type !== "run_created") {
    problems.push(`the first event (seq ${events[0]!.seq}) is ${events[0]!.type}, not run_created`);
  }
  const ends = events.filter((e) => e.type === "run_completed" || e.type === "run_failed");
  if (ends.length > 1) {
    problems.push(`the run ends ${ends.length} times (seq ${ends.map((e) => e.seq).join(", ")})`);
  }
  const end = ends[0];
  if (end && end !== events[events.length - 1]) {
    problems.push(
      `events follow the run's end: ${end.type} is seq ${end.seq}, the last is seq ${events.length - 1}`,
    );
  }
  return problems;
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
  const text = await readOrProblem(() => record.eventsText());
  if (typeof text !== "string") {
    return { events: [], lines: [], problems: [text?.problem ?? "evidence/events.jsonl is missing"] };
  }
  const read = readEventsText(text);
  const problems = read.problems;
  if (read.events.length && read.events[0]!.run_id !== record.runId) {
    problems.push(`events.jsonl belongs to run "${read.events[0]!.run_id}", not "${record.runId}"`);
  }
  const manifestText = await readOrProblem(() => record.manifestText());
  let manifest: Manifest | null = null;
  if (manifestText === null) problems.push("evidence/manifest.json is missing: the run was not sealed");
  else if (typeof manifestText !== "string") problems.push(manifestText.problem);
  else {
    let parsed: unknown = undefined;
    try {
      parsed = JSON.parse(manifestText);
    } catch {
      problems.push("manifest.json is not JSON");
    }
    if (parsed !== undefined) {
      // JSON.parse gives null for "null": without this test a manifest of null would skip every check of it,
      // and a run cut at its end would verify.
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        problems.push("manifest.json is not a JSON object");
      } else {
        manifest = parsed as Manifest;
        problems.push(...manifestProblems(manifest, record.runId, read));
        if (canonicalize(parsed) + "\n" !== manifestText) {
          problems.push("manifest.json is not in RFC 8785 canonical form with one newline at its end");
        }
      }
    }
  }
  problems.push(...await payloadProblems(record, read.events, manifest));
  return read;
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
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/;

function manifestProblems(m: Manifest, runId: string, read: ReadEvents): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(m)) {
    if (!MANIFEST_FIELDS.includes(key)) problems.push(`manifest.json has an unknown field "${key}"`);
  }
  if (typeof m.sealed_at !== "string" || !TIME.test(m.sealed_at)) {
    problems.push(`manifest.json has sealed_at ${JSON.stringify(m.sealed_at)}, not a UTC RFC 3339 time`);
  }
  if (m.format !== MANIFEST_FORMAT) {
    problems.push(`manifest.json has format ${JSON.stringify(m.format)}, not ${MANIFEST_FORMAT}`);
  }
  if (m.run_id !== runId) problems.push(`manifest.json names run "${m.run_id}", not "${runId}"`);
  if (m.events !== read.lines.length) {
    problems.push(`manifest.json counts ${m.events} events, but events.jsonl has ${read.lines.length} lines`);
  }
  const last = read.lines.length ? sha256Hex(read.lines[read.lines.length - 1]!) : null;
  if (m.last_hash !== last) {
    problems.push(
      `manifest.json has last_hash ${m.last_hash}, but the last line of events.jsonl hashes to ${last}`,
    );
  }
  const status = statusOf(read.events[read.events.length - 1] ?? null);
  if (m.status !== status) {
    problems.push(`manifest.json has status ${m.status}, but the events end as ${status}`);
  }
  if (!Array.isArray(m.lost)) problems.push("manifest.json lost is not a list");
  else {
    for (const [i, l] of (m.lost as unknown[]).entries()) {
      const e = l as Record<string, unknown> | null;
      if (
        typeof e !== "object" || e === null || Array.isArray(e) ||
        !["type", "time", "error"].every((k) => typeof e[k] === "string")
      ) problems.push(`manifest.json lost[${i}] is not a type, a time and an error`);
    }
  }
  if (!Array.isArray(m.payloads)) problems.push("manifest.json payloads is not a list");
  else {
    let bytes = 0;
    let previous = "";
    for (const [i, p] of m.payloads.entries()) {
      if (!p || !isSha256(p.sha256) || !Number.isSafeInteger(p.size) || p.size < 0) {
        problems.push(`manifest.json payloads[${i}] is not a SHA-256 and a size`);
        continue;
      }
      // Sorted and once each, as the format says: a payload listed twice could carry two sizes, and the
      // check of its file would see only one of them.
      if (p.sha256 <= previous) {
        problems.push(
          p.sha256 === previous
            ? `manifest.json lists payload ${p.sha256} twice`
            : `manifest.json payloads[${i}] is out of order: the payloads are sorted by sha256`,
        );
      }
      previous = p.sha256;
      bytes += p.size;
    }
    if (m.payload_bytes !== bytes) {
      problems.push(
        `manifest.json has payload_bytes ${m.payload_bytes}, but its payloads add up to ${bytes}`,
      );
    }
  }
  return problems;
}

async function payloadProblems(
  record: RunRecord,
  events: EvidenceEvent[],
  m: Manifest | null,
): Promise<string[]> {
  const problems: string[] = [];
  const listed = new Map<string, number>();
  if (m && Array.isArray(m.payloads)) {
    for (const p of m.payloads) if (p && isSha256(p.sha256)) listed.set(p.sha256, p.size);
  }
  let names: string[] = [];
  try {
    names = await record.payloadNames();
  } catch (error) {
    problems.push(`payloads/ cannot be read: ${(error as Error).message}`);
  }
  const present = new Set(names);
  for (const name of names) {
    if (!listed.has(name) && m) problems.push(`payloads/${name} is not in the manifest's payload list`);
  }
  for (const [sha256, size] of listed) {
    if (!present.has(sha256)) {
      problems.push(`payloads/${sha256} is missing`);
      continue;
    }
    let info;
    try {
      info = await record.payloadInfo(sha256);
    } catch (error) {
      problems.push(`payloads/${sha256} cannot be read: ${(error as Error).message}`);
      continue;
    }
    if (info === null) problems.push(`payloads/${sha256} is missing`);
    else if (info.sha256 !== sha256) {
      problems.push(`payloads/${sha256} was changed: its bytes hash to ${info.sha256}`);
    } else if (info.size !== size) {
      problems.push(`payloads/${sha256} has ${info.size} bytes, but the manifest says ${size}`);
    }
  }
  for (const event of events) {
    for (const sha256 of payloadsOf(event)) {
      if (!isSha256(sha256)) {
        problems.push(`event ${event.seq} (${event.type}) names a payload "${sha256}" that is not a SHA-256`);
      } else if (m && !listed.has(sha256)) {
        problems.push(
          `event ${event.seq} (${event.type}) names payload ${sha256}, which the manifest does not list`,
        );
      } else if (!m && !present.has(sha256)) {
        problems.push(`event ${event.seq} (${event.type}) names payload ${sha256}, which is missing`);
      }
    }
  }
  return problems;
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
export function recordedOutputs(events: EvidenceEvent[]): Map<string, RecordedOutput> {
  const outputs = new Map<string, RecordedOutput>();
  for (const e of events) {
    if (e.type !== "output_artifact_created") continue;
    const { path, sha256, size } = e.data as { path?: unknown; sha256?: unknown; size?: unknown };
    if (typeof path === "string" && typeof sha256 === "string" && typeof size === "number") {
      outputs.set(path, { path, sha256, size });
    }
  }
  return outputs;
}

/**
 * Checks that `output/` holds exactly the outputs the events record, byte for byte.
 *
 * @param folder The run folder.
 * @param events The run's events.
 * @returns The problems found.
 */
export async function verifyOutputs(folder: string, events: EvidenceEvent[]): Promise<Check> {
  const problems: string[] = [];
  const recorded = recordedOutputs(events);
  const root = join(folder, "output");
  const found = new Map<string, string>();
  try {
    // A link as output/ itself would have the walk check another folder's files as this run's.
    if ((await Deno.lstat(root)).isSymlink) throw new LinkedOutput();
    await walk(root, root, found, problems);
  } catch (error) {
    if (error instanceof LinkedOutput) problems.push("output/ is a link, not a folder");
    else if (!(error instanceof Deno.errors.NotFound)) {
      problems.push(`output/ cannot be read: ${(error as Error).message}`);
    }
  }
  for (const [path, full] of found) {
    const want = recorded.get(path);
    if (!want) {
      problems.push(`output/${path} is not a recorded output`);
      continue;
    }
    let info;
    try {
      info = await sha256File(full);
    } catch (error) {
      problems.push(`output/${path} cannot be read: ${(error as Error).message}`);
      continue;
    }
    if (info.sha256 !== want.sha256 || info.size !== want.size) {
      problems.push(
        `output/${path} was changed: it hashes to ${info.sha256} (${info.size} bytes), recorded ${want.sha256} (${want.size} bytes)`,
      );
    }
  }
  for (const path of recorded.keys()) {
    if (!found.has(path)) problems.push(`output/${path} is recorded but missing`);
  }
  return check(problems);
}

async function walk(
  root: string,
  dir: string,
  found: Map<string, string>,
  problems: string[],
): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    const full = join(dir, entry.name);
    const path = relative(root, full).split(sep).join("/");
    if (entry.isSymlink) problems.push(`output/${path} is a link, not a file`);
    else if (entry.isDirectory) await walk(root, full, found, problems);
    else if (entry.isFile) found.set(path, full);
    // A named pipe or a device: hashing it could wait for ever.
    else problems.push(`output/${path} is not a plain file`);
  }
}

class LinkedOutput extends Error {}

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
export function check(problems: string[]): Check {
  return { ok: problems.length === 0, problems };
}
