/**
 * The file store's assessments of a sealed run: `<run folder>/assessments.jsonl`, one judgement a line, each
 * line the RFC 8785 form of its assessment and hash-chained as `events.jsonl` is, from the run's seal: line 1's
 * `prev` is the manifest's `last_hash`, and each later line's `prev` is the SHA-256 of the line before it. So a
 * changed, removed, inserted or reordered assessment breaks the chain, and an assessment cannot be moved to
 * another run. The file is outside `evidence/`, which the seal closed (and a committed bundle holds as it was).
 * Like any log with no seal of its own, it cannot show that its last lines were cut off: docs/evidence-format.md
 * says so.
 * @module
 */
import { EVENT_LINE_MAX_BYTES, parseJson, TooDeepJson } from "./json_depth.ts";
import { join } from "node:path";
import { ProveviError } from "./errors.ts";
import { IrregularFile } from "./open_file.ts";
import { readLinesCapped } from "./events_file.ts";
import { MAX_LINE_PROBLEMS } from "./read_events.ts";
import { openFileNoWait } from "./fd_file.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "./payload_pack.ts";
import { canonicalOrNull, isUtcTime, type Json } from "./event.ts";
import { sha256Hex, utf8 } from "./hash.ts";
import { type Problem, problem } from "./problem.ts";
import { createHash, type Hash } from "node:crypto";

/** The name of the assessments file in a run folder. */
export const ASSESSMENTS_FILE = "assessments.jsonl";

/**
 * The most assessments a reading takes of one run: one for each event and span of a run at its limits. The
 * file lies beside the evidence, so a forged one of half a GiB of small valid lines is read no further.
 */
export const MAX_ASSESSMENTS = 400_000;

/** One line of `assessments.jsonl`. */
export interface AssessmentLine {
  /** Its number, from 1: one more than the line before it. */
  id: number;
  run_id: string;
  /** The event it judges, or null. */
  seq: number | null;
  /** The span it judges, or null. */
  span_id: string | null;
  name: string;
  value: Json;
  rationale: string | null;
  source: string | null;
  /** When it was made, ISO 8601 UTC with microseconds. */
  created_at: string;
  /** The manifest's `last_hash` for line 1, else the SHA-256 of the line before it. */
  prev: string;
}

const FIELDS = [
  "created_at",
  "id",
  "name",
  "prev",
  "rationale",
  "run_id",
  "seq",
  "source",
  "span_id",
  "value",
];
const at = (line: number | null = null) => ({ file: ASSESSMENTS_FILE, line });

/** The problems of a parsed line as an assessment line, in one text, or null when it is one. */
function lineProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "is not a JSON object";
  const a = value as Record<string, unknown>;
  const keys = Object.keys(a).sort();
  if (keys.join() !== FIELDS.join()) return `has the fields ${keys.join(", ")}, not ${FIELDS.join(", ")}`;
  const text = (v: unknown) => typeof v === "string";
  const orNull = (v: unknown, ok: (v: unknown) => boolean) => v === null || ok(v);
  const whole = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
  if (!Number.isSafeInteger(a.id) || (a.id as number) < 1) {
    return "has an id that is not a whole number from 1";
  }
  if (!text(a.run_id) || !text(a.name) || a.name === "") return "lacks a run_id or a name";
  if (!orNull(a.seq, whole)) return "has a seq that is not a whole number";
  if (!orNull(a.span_id, (v) => text(v) && /^[0-9a-f]{16}$/.test(v as string))) return "has a bad span_id";
  if (a.seq !== null && a.span_id !== null) return "judges an event and a span at once";
  if (!orNull(a.rationale, text) || !orNull(a.source, text)) {
    return "has a rationale or source that is not text";
  }
  if (!isUtcTime(a.created_at)) return "has a created_at that is not a UTC time";
  if (!text(a.prev) || !/^[0-9a-f]{64}$/.test(a.prev as string)) return "has a prev that is not a SHA-256";
  return null;
}

/**
 * Reads and checks `<folder>/assessments.jsonl` against the run's seal and events.
 *
 * @param folder The run folder.
 * @param run The run's ID, the manifest's `last_hash` (null when no manifest says one: line 1's `prev` is then
 * not compared, the manifest's own problem being the cause), and the seqs and span IDs of its events.
 * @returns The assessments that read as such (empty when there is no file), and every problem, with its code:
 * `assessments.unreadable`, `assessments.line`, `assessments.chain`, `assessments.target`.
 * @example
 * ```ts
 * import { checkAssessmentsFile } from "./assessments_file.ts";
 * const { problems } = await checkAssessmentsFile("/tmp/runs/run-x", {
 *   runId: "run-x",
 *   lastHash: null,
 *   seqs: new Set(),
 *   spans: new Set(),
 * });
 * ```
 */
export async function checkAssessmentsFile(
  folder: string,
  run: { runId: string; lastHash: string | null; seqs: ReadonlySet<number>; spans: ReadonlySet<string> },
): Promise<{ assessments: AssessmentLine[]; problems: Problem[] }> {
  const text = await readText(join(folder, ASSESSMENTS_FILE));
  if (text === null) return { assessments: [], problems: [] };
  if (typeof text !== "string") return { assessments: [], problems: [text] };
  const problems: Problem[] = [];
  const assessments: AssessmentLine[] = [];
  const lines = text.split("\n");
  // A last line without its newline was cut part way (a writer killed): one problem, and it is not read.
  const cut = lines.pop();
  if (cut !== "") {
    problems.push(problem(
      "assessments.line",
      `${ASSESSMENTS_FILE} line ${lines.length + 1} has no newline: the file was cut`,
      at(lines.length + 1),
    ));
  }
  let prev = run.lastHash;
  let id = 1; // as for seq: after a gap, the count goes on from the id found, so a removed line is one problem
  for (const [i, line] of lines.entries()) {
    const n = i + 1;
    // as events.jsonl is read: a file of millions of empty or forged lines is not a problem or an object a line
    if (problems.length >= MAX_LINE_PROBLEMS || assessments.length >= MAX_ASSESSMENTS) {
      const why = problems.length >= MAX_LINE_PROBLEMS
        ? `has ${problems.length} problems by line ${i}`
        : `holds more than ${MAX_ASSESSMENTS} assessments by line ${i}`;
      problems.push(
        problem("assessments.unreadable", `${ASSESSMENTS_FILE} ${why}: the rest of it is not read`, at(i)),
      );
      break;
    }
    const where = `${ASSESSMENTS_FILE} line ${n}`;
    let value: unknown;
    let notJson = "is not JSON";
    try {
      value = parseJson(line);
    } catch (error) {
      if (error instanceof TooDeepJson) notJson = error.message.replace(/^it /, "");
      value = undefined;
    }
    const wrong = value === undefined ? notJson : lineProblem(value) ??
      (canonicalOrNull(value) !== line ? "is not in RFC 8785 form" : null);
    if (wrong !== null) problems.push(problem("assessments.line", `${where} ${wrong}`, at(n)));
    else {
      const a = value as AssessmentLine;
      if (a.id !== id) {
        problems.push(problem("assessments.line", `${where} has id ${a.id}, not ${id}`, at(n)));
      }
      id = a.id;
      if (a.run_id !== run.runId) {
        problems.push(problem("assessments.line", `${where} judges run "${a.run_id}", not this run`, at(n)));
      }
      if (prev !== null && a.prev !== prev) {
        problems.push(problem(
          "assessments.chain",
          n === 1
            ? `${where} has prev ${a.prev.slice(0, 8)}…, but the manifest's last hash is ${prev.slice(0, 8)}…`
            : `${where} has prev ${a.prev.slice(0, 8)}…, but line ${n - 1} hashes to ${prev.slice(0, 8)}…`,
          at(n),
        ));
      }
      if (a.seq !== null && !run.seqs.has(a.seq)) {
        problems.push(
          problem("assessments.target", `${where} judges event ${a.seq}, which the run lacks`, at(n)),
        );
      }
      if (a.span_id !== null && !run.spans.has(a.span_id)) {
        problems.push(
          problem("assessments.target", `${where} judges span ${a.span_id}, which no event names`, at(n)),
        );
      }
      assessments.push(a);
    }
    id += 1;
    prev = sha256Hex(line);
  }
  return { assessments, problems };
}

/** The file's text; null when there is none; a problem when it is a link, not a plain file, or not UTF-8. */
async function readText(path: string): Promise<string | null | Problem> {
  const unreadable = (why: string) =>
    problem("assessments.unreadable", `${ASSESSMENTS_FILE} cannot be read: ${why}`, at());
  try {
    // A look of microseconds (most runs have no file): an asynchronous one waits for a file thread.
    if (!Deno.lstatSync(path).isFile) return unreadable("it is a link or not a plain file");
    // A byte-order mark is kept: a line that starts with one is not JSON, as in events.jsonl.
    const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    // with the line bounds of events.jsonl's readers: a line past any an assessment makes (a sparse file of zeros)
    // is refused as it comes, not read whole with the rest
    return utf8.decode(await readLinesCapped(path, EVIDENCE_TEXT_MAX_BYTES, EVENT_LINE_MAX_BYTES));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    return unreadable(error instanceof TypeError ? "it is not UTF-8" : (error as Error).message);
  }
}

/**
 * Appends one assessment to `<folder>/assessments.jsonl`, chained from the line before it (from `lastHash`, the
 * manifest's last hash, for the first). The file is locked while its last line is read and the new one written,
 * so two writers at once each chain from the other's line.
 *
 * @param folder The run folder.
 * @param lastHash The sealed run's manifest `last_hash`.
 * @param entry The assessment, without its `id` and `prev`.
 * @returns The line written, parsed.
 * @throws ProveviError when the file is a link or not a plain file; TypeError for a value with no RFC 8785
 * form (the store checks values before).
 * @example
 * ```ts ignore
 * await appendAssessmentLine(folder, manifest.last_hash, { run_id, seq: null, span_id: null, name: "correct",
 *   value: true, rationale: null, source: "ada", created_at: nowUtc() });
 * ```
 */
export async function appendAssessmentLine(
  folder: string,
  lastHash: string,
  entry: Omit<AssessmentLine, "id" | "prev">,
): Promise<AssessmentLine> {
  const path = join(folder, ASSESSMENTS_FILE);
  const refuse = () =>
    new ProveviError(`cannot add an assessment: ${path} is a link or not a plain file; move it away`);
  // opened in one step that follows no link and waits on no FIFO, and checked to be a plain file by what it opened
  await using file = await openFileNoWait(path, { follow: false, write: true, create: true, append: true })
    .catch((error) => {
      throw error instanceof IrregularFile ? refuse() : error;
    });
  const opened = await file.stat();
  // a hard link may be another file of the user's, written through this name; one past the cap is not read
  if ((opened.nlink ?? 1) > 1) {
    throw new ProveviError(`cannot add an assessment: ${path} has ${opened.nlink} hard links; move it away`);
  }
  if (opened.size > EVIDENCE_TEXT_MAX_BYTES) {
    throw new ProveviError(
      `cannot add an assessment: ${path} holds ${opened.size} bytes, more than the ${EVIDENCE_TEXT_MAX_BYTES} a reader takes`,
    );
  }
  await file.lock(true);
  try {
    // Read a piece at a time, keeping only the count of lines and the hash of the last: the size looked at above
    // may be past, as the run's program can grow the file (a lock binds only who asks for it), and a file near the
    // cap was read whole into memory twice over (its bytes and its text).
    const read = await chainEnd(file, EVIDENCE_TEXT_MAX_BYTES);
    if (read === null) {
      throw new ProveviError(
        `cannot add an assessment: ${path} holds more than the ${EVIDENCE_TEXT_MAX_BYTES} bytes a reader takes`,
      );
    }
    const written: AssessmentLine = {
      ...entry,
      id: read.lines + 1,
      prev: read.last ?? lastHash,
    };
    const line = canonicalOrNull(written);
    if (line === null) throw new TypeError("an assessment must be JSON with an RFC 8785 form");
    // A file cut by a kill mid-line gets its newline first, so the new line stands on its own (verify names the cut one).
    const bytes = utf8((read.cut ? "\n" : "") + line + "\n");
    let done = 0;
    while (done < bytes.length) done += await file.write(bytes.subarray(done));
    await file.sync();
    return written;
  } finally {
    await file.unlock();
  }
}

/**
 * What chaining a new line needs of the file, read from its start a piece at a time: how many lines it holds
 * (empty ones left out), the SHA-256 of the last one's bytes (as a reader takes them: a file that is not UTF-8
 * is unreadable to it), and whether it ends in the middle of a line. Null when it holds more than `most` bytes.
 */
async function chainEnd(
  file: Deno.FsFile,
  most: number,
): Promise<{ lines: number; last: string | null; cut: boolean } | null> {
  await file.seek(0, Deno.SeekMode.Start);
  const buffer = new Uint8Array(64 * 1024);
  let [lines, last, read, cut] = [0, null as string | null, 0, false];
  let line: Hash | null = null; // the line being read, once it has a byte
  for (;;) {
    const n = await file.read(buffer);
    if (n === null || n === 0) break;
    read += n;
    if (read > most) return null;
    const piece = buffer.subarray(0, n);
    for (let from = 0; from < n;) {
      const at = piece.indexOf(0x0a, from);
      const end = at === -1 ? n : at;
      if (end > from) (line ??= createHash("sha256")).update(piece.subarray(from, end));
      if (at === -1) break;
      if (line !== null) [lines, last, line] = [lines + 1, line.digest("hex"), null];
      from = at + 1;
    }
    cut = piece[n - 1] !== 0x0a;
  }
  if (line !== null) [lines, last] = [lines + 1, line.digest("hex")];
  return { lines, last, cut };
}
