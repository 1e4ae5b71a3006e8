/**
 * The checks of a run's evidence and outputs. Each returns `{ ok, problems }` and prints nothing; a malformed
 * run folder is a problem, not an exception.
 * @module
 */
import { join, relative, sep } from "node:path";
import { canonicalOrNull, eventProblems, type EvidenceEvent, isUtcTime, payloadsOf } from "./event.ts";
import { eventDataProblems, eventWhere, isOutputPath } from "./event_rules.ts";
import { isSha256, sha256File, sha256Hex } from "./hash.ts";
import { type Manifest, MANIFEST_FORMAT, statusOf } from "./manifest.ts";
import { atLine, hasCode, type Problem, problem, type ProblemCode } from "./problem.ts";
import type { RunRecord } from "./record.ts";

/** The result of a check. */
export interface Check {
  /** True when no problem was found. */
  ok: boolean;
  /** Each problem, with its code and where it is. */
  problems: Problem[];
}

/** The events of a run as a check reads them, with the problems of reading them. */
export interface ReadEvents {
  /** The lines that parsed as events. */
  events: EvidenceEvent[];
  /** The line number (from 1) of each of `events`. */
  eventLines: number[];
  /** Every line of the file, without its newline (a line that is not UTF-8 as decoded with U+FFFD). */
  lines: string[];
  /** The SHA-256 of each line's bytes, without its newline. */
  lineHashes: string[];
  /** The problems found, each with its code and where it is. */
  problems: Problem[];
  /**
   * True when every line is an event. The checks that need every event (the outputs against `output/`, the
   * status against the manifest) run only then: a line that cannot be read is the cause, and what follows
   * from it is not reported again.
   */
  complete: boolean;
  /**
   * True when the manifest's counts and last hash cannot be compared without repeating a cause already
   * reported: the file was cut part way, or events follow the run's end.
   */
  settled: boolean;
  /**
   * The texts of `events.jsonl` and `manifest.json` as {@linkcode verifyEvidence} read them (null for a file that
   * is missing or cannot be read as text), for the checks that follow it, so that no file is read twice.
   */
  texts?: { events: string | null; manifest: string | null };
}

/**
 * Parses the text of `events.jsonl`, checking each line's form, type, sequence, run ID and chain.
 *
 * @param text The file's text.
 * @returns The events that parsed, their lines, and every problem found.
 * @example
 * ```ts
 * import { readEventsText } from "./verify.ts";
 * readEventsText("not json\n").problems[0]!.code; // "line.not_json"
 * ```
 */
export function readEventsText(text: string): ReadEvents {
  const lines = text.split("\n");
  const cut = lines[lines.length - 1] !== "";
  if (!cut) lines.pop();
  return readLines(lines.map((line) => ({ line, bytes: null })), cut);
}

/**
 * Parses the bytes of `events.jsonl` line by line, so that a line that is not UTF-8 is a problem of that line
 * while the others are still read and chained (each line's hash is of its own bytes).
 *
 * @param bytes The file's bytes.
 * @returns As {@linkcode readEventsText}.
 */
export function readEventsBytes(bytes: Uint8Array): ReadEvents {
  const raw: { line: string; bytes: Uint8Array | null }[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    const part = bytes.subarray(start, end);
    let line: string | null = null;
    try {
      line = strictUtf8.decode(part);
    } catch { /* reported by readLines */ }
    raw.push({ line: line ?? lenientUtf8.decode(part), bytes: line === null ? part : null });
    start = end + 1;
  }
  return readLines(raw, bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** `bytes` is set only for a line that is not UTF-8: its hash is of those bytes. */
function readLines(raw: { line: string; bytes: Uint8Array | null }[], cut: boolean): ReadEvents {
  const problems: Problem[] = [];
  const events: EvidenceEvent[] = [];
  const eventLines: number[] = [];
  const lines = raw.map((r) => r.line);
  const lineHashes = raw.map((r) => sha256Hex(r.bytes ?? r.line));
  let complete = true;
  if (cut) {
    problems.push(
      problem(
        "events.cut",
        `events.jsonl line ${lines.length} has no newline at its end: the file was cut part way`,
        atLine(lines.length),
      ),
    );
  }
  let runId: string | null = null;
  let lastSeq: number | null = null;
  // A line that cannot be read was changed; the next line's prev then differs as a consequence, not a cause.
  let afterUnreadable = false;
  raw.forEach(({ line, bytes }, index) => {
    const n = index + 1;
    const where = `events.jsonl line ${n}`;
    const unreadable = (found: Problem) => {
      problems.push(found);
      complete = false;
      afterUnreadable = true;
    };
    if (bytes !== null) {
      return unreadable(
        problem(
          "line.not_utf8",
          `${where} is not valid UTF-8, so its text is not the bytes that were hashed`,
          {
            ...atLine(n),
          },
        ),
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      // The last line of a cut file is not JSON because it was cut: that problem is reported already.
      if (cut && index === raw.length - 1) {
        complete = false;
        return;
      }
      return unreadable(problem("line.not_json", `${where} is not JSON`, atLine(n)));
    }
    const shape = eventProblems(parsed);
    if (shape.length) {
      const seq = (parsed as { seq?: unknown } | null)?.seq;
      const known = Number.isSafeInteger(seq) ? seq as number : null;
      return unreadable(
        problem(
          "line.not_event",
          `${where} (seq ${known ?? "unreadable"}) is not an event: ${shape.join("; ")}`,
          atLine(n, known),
        ),
      );
    }
    const prevUnreadable = afterUnreadable;
    afterUnreadable = false;
    const event = parsed as EvidenceEvent;
    const at = `${where} (seq ${event.seq})`;
    const place = atLine(n, event.seq);
    const canonical = canonicalOrNull(event);
    if (canonical === null) {
      problems.push(problem(
        "line.lone_surrogate",
        `${at} holds a lone surrogate (an escape such as \\ud800 without its pair), which has no UTF-8 form and no RFC 8785 form`,
        place,
      ));
    } else if (canonical !== line) {
      problems.push(problem("line.not_canonical", `${at} is not in RFC 8785 canonical form`, place));
    }
    // Each seq follows the one before it; after a gap or a step back the count goes on from this seq, so one
    // removed or inserted line is one problem, not one per line after it.
    const want = lastSeq === null ? index : lastSeq + 1;
    if (event.seq !== want && !prevUnreadable) {
      problems.push(problem(
        "seq.out_of_order",
        lastSeq === null
          ? `${at} is out of sequence: line ${n} must have seq ${index}`
          : `${at} is out of sequence: after seq ${lastSeq} comes seq ${want}`,
        place,
      ));
    }
    lastSeq = event.seq;
    runId ??= event.run_id;
    if (event.run_id !== runId) {
      problems.push(
        problem("run.id_mismatch", `${at} belongs to run "${event.run_id}", not "${runId}"`, place),
      );
    }
    const expected = index === 0 ? null : lineHashes[index - 1]!;
    if (event.prev !== expected && !prevUnreadable) {
      problems.push(problem(
        "chain.broken",
        index === 0
          ? `${at} has prev ${event.prev}, but the first event's prev is null`
          : `${at} has prev ${event.prev}, but line ${index} hashes to ${expected}`,
        place,
      ));
    }
    problems.push(...eventDataProblems(event, n));
    events.push(event);
    eventLines.push(n);
  });
  const order = orderProblems(events, eventLines, lines.length);
  problems.push(...order);
  const settled = !cut && !hasCode(order, "order.after_end");
  return { events, eventLines, lines, lineHashes, problems, complete, settled };
}

/**
 * The order every run keeps: `run_created` first, and at most one ending event (`run_completed` or
 * `run_failed`), which is the last line. A chain rewritten after the end cannot hide events behind it; the
 * problem names the first line after the end, where the record goes wrong.
 */
function orderProblems(events: EvidenceEvent[], at: number[], lineCount: number): Problem[] {
  const problems: Problem[] = [];
  if (events.length && at[0] === 1 && events[0]!.type !== "run_created") {
    problems.push(problem(
      "order.first_not_created",
      `events.jsonl line 1 (seq ${events[0]!.seq}) is ${
        events[0]!.type
      }: the first event must be run_created`,
      atLine(1, events[0]!.seq),
    ));
  }
  const ends = events.flatMap((e, i) =>
    e.type === "run_completed" || e.type === "run_failed" ? [{ e, line: at[i]! }] : []
  );
  if (ends.length > 1) {
    problems.push(problem(
      "order.ends_twice",
      `events.jsonl lines ${ends.map((x) => x.line).join(", ")} (seq ${
        ends.map((x) => x.e.seq).join(", ")
      }) each end the run: a run ends once`,
      atLine(ends[1]!.line, ends[1]!.e.seq),
    ));
  }
  const end = ends[0];
  if (end && end.line !== lineCount) {
    const next = end.line + 1;
    const i = at.indexOf(next);
    const seq = i === -1 ? null : events[i]!.seq;
    problems.push(problem(
      "order.after_end",
      `events.jsonl line ${next}${
        seq === null ? "" : ` (seq ${seq})`
      } follows the run's end: line ${end.line} (seq ${end.e.seq}) ends the run with ${end.e.type}, and ${
        lineCount - end.line
      } line(s) follow it, to line ${lineCount}`,
      atLine(next, seq),
    ));
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
  // The two files are read at once; the manifest's problems are reported after the events'.
  const [found, manifestText] = await Promise.all([
    readRecordEvents(record),
    readOrProblem(() => record.manifestText()),
  ]);
  const manifestRead = typeof manifestText === "string" ? manifestText : null;
  if (found === null || "problem" in found) {
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
  let manifest: Manifest | null = null;
  const inManifest = { file: "manifest.json" };
  if (manifestText === null) {
    problems.push(
      problem("manifest.missing", "evidence/manifest.json is missing: the run was not sealed", inManifest),
    );
  } else if (typeof manifestText !== "string") {
    problems.push(problem("manifest.unreadable", manifestText.problem, inManifest));
  } else {
    let parsed: unknown = undefined;
    try {
      parsed = JSON.parse(manifestText);
    } catch {
      problems.push(problem("manifest.not_json", "manifest.json is not JSON", inManifest));
    }
    if (parsed !== undefined) {
      // JSON.parse gives null for "null": without this test a manifest of null would skip every check of it,
      // and a run cut at its end would verify.
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        problems.push(problem("manifest.not_object", "manifest.json is not a JSON object", inManifest));
      } else {
        manifest = parsed as Manifest;
        problems.push(...manifestProblems(manifest, record.runId, read));
        if (canonicalOrNull(parsed) + "\n" !== manifestText) {
          problems.push(problem(
            "manifest.not_canonical",
            "manifest.json is not in RFC 8785 canonical form with one newline at its end",
            inManifest,
          ));
        }
      }
    }
  }
  problems.push(...await payloadProblems(record, read, manifest));
  if (record.folder !== null) problems.push(...await evidenceExtras(record.folder));
  return read;
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
        const bytes = await Deno.readFile(join(record.folder, "evidence", "events.jsonl"));
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
  const push = (code: ProblemCode, message: string) =>
    problems.push(problem(code, message, { file: "manifest.json" }));
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
  if (has("format") && m.format !== MANIFEST_FORMAT) {
    push("manifest.format", `manifest.json has format ${JSON.stringify(m.format)}, not ${MANIFEST_FORMAT}`);
  }
  if (has("run_id") && m.run_id !== runId) {
    push("manifest.run_id", `manifest.json names run ${JSON.stringify(m.run_id)}, but the run is "${runId}"`);
  }
  // Events that cannot be read at all (a link, a file that cannot be opened) have their own problem.
  const unread = (read.lines.length === 0 && !read.complete) || !read.settled;
  if (has("events") && !unread && m.events !== read.lines.length) {
    push(
      "manifest.count",
      `manifest.json counts ${m.events} events, but events.jsonl has ${read.lines.length} lines`,
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
  if (!has("lost")) { /* reported */ }
  else if (!Array.isArray(m.lost)) push("manifest.lost", "manifest.json lost is not a list");
  else {
    for (const [i, l] of (m.lost as unknown[]).entries()) {
      const e = l as Record<string, unknown> | null;
      if (
        typeof e !== "object" || e === null || Array.isArray(e) ||
        Object.keys(e).length !== 3 || typeof e.type !== "string" || typeof e.error !== "string" ||
        !isUtcTime(e.time)
      ) push("manifest.lost", `manifest.json lost[${i}] is not exactly a type, a UTC time and an error`);
    }
  }
  if (!has("payloads")) { /* reported */ }
  else if (!Array.isArray(m.payloads)) push("manifest.payload_entry", "manifest.json payloads is not a list");
  else {
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
    if (has("payload_bytes") && m.payload_bytes !== bytes) {
      push(
        "manifest.payload_bytes",
        `manifest.json has payload_bytes ${m.payload_bytes}, but its payloads add up to ${bytes}`,
      );
    }
  }
  return problems;
}

async function payloadProblems(record: RunRecord, read: ReadEvents, m: Manifest | null): Promise<Problem[]> {
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
  for (const [sha256, size] of listed) {
    const file = { file: `payloads/${sha256}` };
    if (!present.has(sha256)) {
      problems.push(problem("payload.missing", `payloads/${sha256} is missing`, file));
      continue;
    }
    let info;
    try {
      info = await record.payloadInfo(sha256);
    } catch (error) {
      problems.push(
        problem("payload.unreadable", `payloads/${sha256} cannot be read: ${(error as Error).message}`, file),
      );
      continue;
    }
    if (info === null) problems.push(problem("payload.missing", `payloads/${sha256} is missing`, file));
    else if (info.sha256 !== sha256) {
      problems.push(
        problem(
          "payload.hash_mismatch",
          `payloads/${sha256} was changed: its bytes hash to ${info.sha256}`,
          file,
        ),
      );
    } else if (info.size !== size) {
      problems.push(
        problem(
          "payload.size",
          `payloads/${sha256} has ${info.size} bytes, but the manifest says ${size}`,
          file,
        ),
      );
    }
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
      } else if (!m && !present.has(sha256)) {
        problems.push(
          problem("payload.event_unlisted", `${where} names payload ${sha256}, which is missing`, place),
        );
      }
    }
  });
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
    if ((await Deno.lstat(root)).isSymlink) throw new LinkedOutput();
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
      info = await sha256File(full);
    } catch (error) {
      problems.push(
        problem("output.unreadable", `output/${path} cannot be read: ${(error as Error).message}`, file),
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
 * named files, so another file there would ride along unchecked.
 */
async function evidenceExtras(folder: string): Promise<Problem[]> {
  const problems: Problem[] = [];
  try {
    for await (const entry of Deno.readDir(join(folder, "evidence"))) {
      if (EVIDENCE_NAMES.includes(entry.name)) continue;
      problems.push(problem(
        "evidence.extra",
        `evidence/${entry.name} is not part of the evidence format (events.jsonl, manifest.json, payloads/, attestation.dsse.json)`,
        { file: entry.name },
      ));
    }
  } catch { /* a missing or linked evidence/ is the problem of events.jsonl */ }
  return problems.sort((a, b) => (a.file! < b.file! ? -1 : 1));
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
