/**
 * The check of a run against an indexed store (sqlite, postgres): every row that the run implies must match
 * the run's lines, files and events. Each problem names the table and the row's key, so a changed or deleted
 * row is found. The store reads its rows through a {@linkcode RowSource}, so both stores run the same check.
 * @module
 */
import { dirname, join } from "node:path";
import { packedPayloads, payloadPlace } from "../evidence/payload_pack.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import { evidencePaths, readEventsFileText, readEvidenceText } from "./file_store.ts";
import { sha256Hex } from "../evidence/hash.ts";
import {
  columnText,
  columnValue,
  createdRows,
  RUN_FIELD_COLUMNS,
  runEnd,
  type SqlValue,
} from "./store_rows.ts";
import { eventsTextLines, type ReadEvents } from "../evidence/read_events.ts";
import { type Problem, problem } from "../evidence/problem.ts";
import { boundedRow, boundedRows, MAX_ROW_PROBLEMS, RowProblems, type RowSource } from "./row_reading.ts";
import { settingsProblems } from "./row_check_settings.ts";
import { eventRowProblems, type InHand, ParsedWeight } from "./row_check_events.ts";

export type { RowSource } from "./row_reading.ts";

/** Where the check's problems go. */
type Problems = Pick<RowProblems, "push">;

const show = (v: unknown) => (v === null || v === undefined ? "null" : JSON.stringify(v));

/**
 * Checks a run's rows: the events against the lines of `events.jsonl` (columns, URIs and chain), the run's
 * row against its events and manifest, its settings, agent class and version, experiment and version, its
 * payloads against their files, and the bundle's place against `bundle.json`. The store adds its schema's
 * problems.
 *
 * @param db The store's rows.
 * @param runId The run.
 * @param options `schema`: the problems of the store's schema, reported first as `store: …`; `folder`: the
 * run folder to compare with, instead of the one the run's row records (a copy of it on another machine);
 * `bundle`: the pinned URI of the committed bundle that such a copy came from, when it has no `bundle.json`;
 * `weight`: the most the check parses of the run's rows and lines together ({@linkcode ParsedWeight}).
 * @returns The problems (`rows.schema`, and a `rows.` code for each kind of row that differs from the run), each
 *   naming the table and the row's key; empty when the rows match.
 * @example
 * ```ts
 * import { SqliteStore } from "../mod.ts";
 * await using store = new SqliteStore("/tmp/evidence.db", { create: false });
 * const problems = await store.checkRun("run-20261129T120000Z-0badc0de");
 * ```
 */
export async function checkStoreRows(
  db: RowSource,
  runId: string,
  options: {
    schema?: string[];
    folder?: string | null;
    bundle?: string | null;
    read?: ReadEvents | null;
    weight?: number;
  } = {},
): Promise<Problem[]> {
  const problems = new RowProblems(
    runId,
    (options.schema ?? []).map((p) => problem("rows.schema", `store: ${p}`)),
  );
  const runKey = `provevi_runs (run_id "${runId}")`;
  const before = problems.list.length;
  const run = await boundedRow(
    db,
    {
      table: "provevi_runs",
      columns: RUN_COLUMNS,
      paths: ["folder"],
      where: "run_id = ?",
      params: [runId],
      code: "rows.run_differs",
      key: () => runKey,
    },
    problems,
    runId,
  );
  if (!run) {
    // a row holding a text too wide to read: the problem says so
    if (problems.list.length > before) return problems.list;
    return [
      ...problems.list,
      problem("rows.run_missing", `${runKey} is missing: the store holds no row for the run`),
    ];
  }
  const folder = options.folder ?? String(run.folder);
  const paths = evidencePaths(folder);
  const hand = inHand(options.read, options.folder);
  const text = hand ? hand.texts.events : await readOrNull(paths.events, problems, readEventsFileText);
  const manifest = hand ? hand.texts.manifest : await readOrNull(paths.manifest, problems);
  // Only the lines: the verifier parses and checks them; the rows are compared with the lines as they are.
  const lines = hand ? hand.lines : text === null ? [] : eventsTextLines(text);
  const weight = new ParsedWeight(options.weight);
  const rows = await eventRowProblems(db, runId, { text, lines, manifest, problems, hand, weight });
  const events = text === null ? rows.events : lines.map((l, seq) => {
    // a line its row holds as it is was parsed already, as that row's
    const row = rows.bySeq.get(seq);
    if (row !== undefined && row.line === l) return row.event;
    if (!weight.take(l, `line ${seq + 1} of events.jsonl`, problems)) return null;
    try {
      return JSON.parse(l) as EvidenceEvent;
    } catch {
      return null;
    }
  }).filter((e): e is EvidenceEvent => typeof e === "object" && e !== null && !Array.isArray(e));
  const created = events[0]?.type === "run_created" ? events[0] : null;
  runRowProblems(run, { runId, events, lines, manifest, rows: rows.count, problems });

  // Settings, agent class and version, experiment and version.
  await settingsProblems(db, runId, created, problems);
  await assessmentProblems(db, runId, rows.events, problems);
  await payloadRowProblems(db, runId, paths.payloads, problems);
  if (!problems.stopped && (run.bundle_uri !== null || run.bundle_pinned !== null)) {
    await bundleRowProblems(run, { runKey, folder, bundle: options.bundle, problems });
  }
  return problems.list;
}

/** The columns of the run's row that the check compares, all texts. */
const RUN_COLUMNS = [
  "folder",
  "status",
  "ended_at",
  "manifest_sha256",
  "last_hash",
  "bundle_uri",
  "bundle_pinned",
  ...RUN_FIELD_COLUMNS,
];

/**
 * The verifier's read of the folder's `events.jsonl` and `manifest.json`, to compare the rows with instead of
 * reading and parsing the files again: only for a folder named by the caller (the one it read), and only when it
 * read both as text (a file missing or unreadable is read here again, so its problem is this check's too).
 */
function inHand(read: ReadEvents | null | undefined, folder: string | null | undefined): InHand | null {
  if (!read || typeof folder !== "string") return null;
  const texts = read.texts;
  return typeof texts?.events === "string" && typeof texts.manifest === "string" ? read as InHand : null;
}

/** The run's row against its events and files: its fields, its end, its manifest and last line. */
function runRowProblems(
  run: Record<string, SqlValue>,
  of: {
    runId: string;
    events: readonly EvidenceEvent[];
    lines: readonly string[];
    manifest: string | null;
    rows: number;
    problems: Problems;
  },
): void {
  const runKey = `provevi_runs (run_id "${of.runId}")`;
  const differs = (message: string) => of.problems.push(problem("rows.run_differs", `${runKey}: ${message}`));
  const created = of.events[0]?.type === "run_created" ? of.events[0] : null;
  const fields = createdRows(created).fields;
  for (const c of RUN_FIELD_COLUMNS) {
    if (run[c] !== fields[c]) {
      differs(`column ${c} is ${show(run[c])}, but its events say ${show(fields[c])}`);
    }
  }
  const sealed = of.manifest !== null;
  const end = runEnd(of.events[of.events.length - 1] ?? null, sealed);
  if (run.status !== end.status) {
    differs(`status is ${show(run.status)}, but its events say ${show(end.status)}`);
  }
  if (run.ended_at !== end.ended_at) {
    differs(`ended_at is ${show(run.ended_at)}, but its events say ${show(end.ended_at)}`);
  }
  if (of.manifest !== null) {
    const hash = sha256Hex(of.manifest);
    if (run.manifest_sha256 !== hash) {
      differs(`manifest_sha256 is ${show(run.manifest_sha256)}, but manifest.json hashes to ${hash}`);
    }
    const last = of.lines.length ? sha256Hex(of.lines[of.lines.length - 1]!) : null;
    if (run.last_hash !== last) {
      differs(`last_hash is ${show(run.last_hash)}, but the last line hashes to ${show(last)}`);
    }
  } else {
    if (run.manifest_sha256 !== null) differs(`manifest_sha256 is set, but the run has no manifest.json`);
    of.problems.push(problem(
      "rows.unsealed",
      `run "${of.runId}" was not sealed: provevi_events holds ${of.rows} rows and events.jsonl ${of.lines.length} lines`,
    ));
  }
}

/**
 * The payload rows against the files of `payloads/` and the records of `payloads.pack` (verify checks their
 * bytes); `folder` is the run's `payloads/`.
 */
async function payloadRowProblems(
  db: RowSource,
  runId: string,
  folder: string,
  problems: RowProblems,
): Promise<void> {
  if (problems.stopped) return;
  const differs = (message: string) => problems.push(problem("rows.payload_differs", message));
  const stored = new Map<string, { size: number; packed: boolean }>();
  try {
    // Looks of microseconds each, made in turn: an asynchronous one waits for a file thread, which on a busy
    // machine costs more than the look, for every payload of every run a check reads.
    for (const entry of Deno.readDirSync(folder)) {
      if (entry.isFile) {
        stored.set(entry.name, { size: Deno.statSync(join(folder, entry.name)).size, packed: false });
      }
    }
  } catch { /* verify reports a missing payloads/ */ }
  try {
    for (const [sha256, size] of await packedPayloads(dirname(dirname(folder)))) {
      if (!stored.has(sha256)) stored.set(sha256, { size, packed: true });
    }
  } catch { /* verify reports an unreadable pack */ }
  const seen = new Set<string>();
  const key = (sha256: unknown) => `provevi_payloads (run_id "${runId}", sha256 ${sha256})`;
  const rows = boundedRows(
    db,
    {
      table: "provevi_payloads",
      columns: ["sha256", "size", "place"],
      texts: ["sha256", "place"],
      short: ["sha256"],
      where: "run_id = ?",
      params: [runId],
      order: "sha256",
      most: stored.size + MAX_ROW_PROBLEMS,
      implied: "its payloads' files and records",
      code: "rows.payload_differs",
      key: (r) => key(r.sha256),
    },
    problems,
    runId,
  );
  for await (const row of rows) {
    const sha256 = String(row.sha256);
    const file = stored.get(sha256);
    if (!file) {
      differs(`${key(sha256)} has no file in payloads/ nor record in payloads.pack`);
      continue;
    }
    seen.add(sha256);
    if (sha256.includes(".tmp-")) continue;
    const { size, packed } = file;
    if (Number(row.size) !== size) {
      differs(`${key(sha256)}: size is ${row.size}, but the ${packed ? "record" : "file"} has ${size} bytes`);
    }
    const place = payloadPlace(sha256, packed);
    if (row.place !== place) differs(`${key(sha256)}: place is ${show(row.place)}, not ${place}`);
  }
  if (problems.stopped) return;
  for (const sha256 of stored.keys()) {
    if (!sha256.includes(".tmp-") && !seen.has(sha256)) differs(`${key(sha256)} is missing`);
  }
}

/** Where the store says the bundle was committed, against `bundle.json` (or the bundle a copy came from). */
async function bundleRowProblems(
  run: Record<string, SqlValue>,
  of: { runKey: string; folder: string; bundle: string | null | undefined; problems: Problems },
): Promise<void> {
  const differs = (message: string) =>
    of.problems.push(problem("rows.bundle_differs", `${of.runKey}: ${message}`));
  const text = await readOrNull(join(of.folder, "bundle.json"), of.problems);
  let bundle: { uri?: unknown; pinned?: unknown } | null = null;
  try {
    bundle = text === null ? null : JSON.parse(text);
  } catch { /* below */ }
  if (!bundle && text === null && of.bundle) {
    // A copy of the run taken from its committed bundle has no bundle.json: the caller names the bundle.
    if (columnValue(of.bundle) !== run.bundle_pinned) {
      differs(`bundle_pinned is ${show(run.bundle_pinned)}, but the bundle given is ${show(of.bundle)}`);
    }
  } else if (!bundle) {
    differs(
      `the store records a bundle at ${show(run.bundle_pinned)}, but bundle.json is missing or not JSON`,
    );
  } else {
    if (columnValue(bundle.pinned) !== run.bundle_pinned) {
      differs(`bundle_pinned is ${show(run.bundle_pinned)}, but bundle.json says ${show(bundle.pinned)}`);
    }
    if (columnValue(bundle.uri) !== run.bundle_uri) {
      differs(`bundle_uri is ${show(run.bundle_uri)}, but bundle.json says ${show(bundle.uri)}`);
    }
  }
}

/**
 * Each assessment of the run must judge an event or a span that the run has, with a JSON value. A run implies no
 * number of them: they are read as they come, until the check stops.
 */
async function assessmentProblems(
  db: RowSource,
  runId: string,
  events: EvidenceEvent[],
  problems: RowProblems,
): Promise<void> {
  const differs = (message: string) => problems.push(problem("rows.assessment_differs", message));
  const seqs = new Set(events.map((e) => e.seq));
  const spans = new Set(events.map((e) => e.span_id).filter((s) => typeof s === "string").map(columnText));
  const key = (id: unknown) => `provevi_assessments (id ${id}, run_id "${runId}")`;
  const rows = boundedRows(
    db,
    {
      table: "provevi_assessments",
      columns: ["id", "seq", "span_id", "value"],
      texts: ["span_id", "value"],
      short: ["span_id"],
      where: "run_id = ?",
      params: [runId],
      order: "id",
      most: Infinity,
      implied: "its events",
      code: "rows.assessment_differs",
      key: (r) => key(r.id),
    },
    problems,
    runId,
  );
  for await (const row of rows) {
    const a = row as { id: number; seq: number | null; span_id: string | null; value: string };
    if (a.seq !== null && !seqs.has(Number(a.seq))) {
      differs(`${key(a.id)} judges event ${a.seq}, which the run lacks`);
    }
    if (a.span_id !== null && !spans.has(a.span_id)) {
      differs(`${key(a.id)} judges span ${a.span_id}, which the run lacks`);
    }
    try {
      JSON.parse(a.value);
    } catch {
      differs(`${key(a.id)}: its value is not JSON`);
    }
  }
}

/** The text of an evidence file, or null when it is missing; a file that cannot be read is a problem. */
async function readOrNull(
  path: string,
  problems: Problems,
  read: (path: string) => Promise<string | null> = readEvidenceText,
): Promise<string | null> {
  try {
    return await read(path);
  } catch (error) {
    problems.push(problem("rows.unreadable", `${path} cannot be read: ${(error as Error).message}`));
    return null;
  }
}
