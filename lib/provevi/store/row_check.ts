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
  EVENT_COLUMNS,
  eventRefs,
  RUN_FIELD_COLUMNS,
  runEnd,
  type SqlValue,
} from "./store_rows.ts";
import { eventsTextLines, type ReadEvents } from "../evidence/read_events.ts";
import { type Problem, problem } from "../evidence/problem.ts";

/**
 * How the check reads a store's rows: a query written with `?` placeholders and its parameters, giving plain
 * rows. Integer columns (`seq`, `n`, `size`, `id`) come back as numbers or as text of a number.
 */
export interface RowSource {
  all(sql: string, ...params: SqlValue[]): Promise<Record<string, SqlValue>[]>;
}

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
 * `bundle`: the pinned URI of the committed bundle that such a copy came from, when it has no `bundle.json`.
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
  options: { schema?: string[]; folder?: string | null; bundle?: string | null; read?: ReadEvents | null } =
    {},
): Promise<Problem[]> {
  const problems = (options.schema ?? []).map((p) => problem("rows.schema", `store: ${p}`));
  const runKey = `provevi_runs (run_id "${runId}")`;
  const run = (await db.all("SELECT * FROM provevi_runs WHERE run_id = ?", runId))[0];
  if (!run) {
    return [
      ...problems,
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
  const rows = await eventRowProblems(db, runId, { text, lines, problems, hand });
  const events = text === null ? rows.events : lines.map((l, seq) => {
    // a line its row holds as it is was parsed already, as that row's
    const row = rows.bySeq.get(seq);
    if (row !== undefined && row.line === l) return row.event;
    try {
      return JSON.parse(l) as EvidenceEvent;
    } catch {
      return null;
    }
  }).filter((e): e is EvidenceEvent => typeof e === "object" && e !== null && !Array.isArray(e));
  const created = events[0]?.type === "run_created" ? events[0] : null;
  runRowProblems(run, { runId, events, lines, manifest, rows: rows.count, problems });

  // Settings, agent class and version, experiment and version.
  const settings = [
    ...(created ? await createdRowProblems(db, runId, created) : []),
    ...await firstRunProblems(db, runId, created),
  ];
  problems.push(...settings.map((p) => problem("rows.settings_differ", p)));
  problems.push(
    ...(await assessmentProblems(db, runId, rows.events)).map((p) => problem("rows.assessment_differs", p)),
  );
  problems.push(
    ...(await payloadRowProblems(db, runId, paths.payloads)).map((p) => problem("rows.payload_differs", p)),
  );
  if (run.bundle_uri !== null || run.bundle_pinned !== null) {
    await bundleRowProblems(run, { runKey, folder, bundle: options.bundle, problems });
  }
  return problems;
}

/** What the verifier read of the folder being compared, when it read both files as text; else null. */
type InHand = ReadEvents & { texts: { events: string; manifest: string } };

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

/**
 * The event rows against the lines of `events.jsonl`: each row's line, columns, URIs and chain, and the lines
 * that have no row.
 */
async function eventRowProblems(
  db: RowSource,
  runId: string,
  run: { text: string | null; lines: readonly string[]; problems: Problem[]; hand: InHand | null },
): Promise<{
  events: EvidenceEvent[];
  count: number;
  /** Each row's line and the event parsed from it (null when it holds none), by seq. */
  bySeq: Map<number, { line: string; event: EvidenceEvent | null }>;
}> {
  const { lines, problems } = run;
  const rows = (await db.all("SELECT * FROM provevi_events WHERE run_id = ? ORDER BY seq", runId)).map((
    r,
  ) => ({ ...r, seq: Number(r.seq) })) as (Record<string, SqlValue> & { seq: number; line: string })[];
  const refs = await eventRefRows(db, runId);
  if (run.text === null) {
    problems.push(
      problem(
        "rows.unreadable",
        `the run's events.jsonl is missing, so its ${rows.length} event rows have no lines`,
      ),
    );
  }
  const bySeq = new Map(rows.map((r) => [Number(r.seq), r]));
  const parsed = new Map<number, { line: string; event: EvidenceEvent | null }>();
  // The events the verifier parsed, by the index of their line: a row that holds that line as it is takes it.
  const verified = new Map<number, EvidenceEvent>();
  // and the hash the verifier made of that line
  const lineHash = (seq: number) => {
    const line = bySeq.get(seq)!.line;
    return run.hand?.lines[seq] === line ? run.hand.lineHashes[seq]! : sha256Hex(line);
  };
  run.hand?.events.forEach((e, i) => verified.set(run.hand!.eventLines[i]! - 1, e));
  const events: EvidenceEvent[] = [];
  for (const row of rows) {
    const same = verified.get(row.seq);
    const event = same !== undefined && lines[row.seq] === row.line
      ? same
      : eventOfRow(row, { runId, problems });
    if (!parsed.has(row.seq)) parsed.set(row.seq, { line: row.line, event });
    if (event === null) continue;
    events.push(event);
    const key = `provevi_events (run_id "${runId}", seq ${row.seq})`;
    const differs = (message: string) => problems.push(problem("rows.event_differs", message));
    const line = lines[row.seq];
    if (run.text !== null && line === undefined) differs(`${key} has no line in events.jsonl`);
    else if (line !== undefined && line !== row.line) {
      differs(`${key}: its line differs from line ${row.seq + 1} of events.jsonl`);
    }
    for (const c of EVENT_COLUMNS) {
      const want = columnValue((event[c] ?? null) as SqlValue);
      if (row[c] !== want) differs(`${key}: column ${c} is ${show(row[c])}, but its line says ${show(want)}`);
    }
    const uris = refs.get(row.seq) ?? [];
    const named = eventRefs(event);
    if (JSON.stringify(uris) !== JSON.stringify(named)) {
      problems.push(problem(
        "rows.refs_differ",
        `provevi_event_refs (run_id "${runId}", seq ${row.seq}) holds ${
          show(uris)
        }, but the event's line names ${show(named)}`,
      ));
    }
    const expectedPrev = row.seq === 0 ? null : bySeq.has(row.seq - 1) ? lineHash(row.seq - 1) : undefined;
    if (expectedPrev !== undefined && event.prev !== expectedPrev) {
      differs(
        `${key}: the chain does not cover its line: prev is ${show(event.prev)}, expected ${
          show(expectedPrev)
        }`,
      );
    }
  }
  problems.push(...unmatchedProblems({ runId, lines, rows: rows.length, bySeq, refs }));
  return { events, count: rows.length, bySeq: parsed };
}

/** The refs rows with no event row, and the lines of events.jsonl with no row (a cut run, or rows lacking). */
function unmatchedProblems(
  { runId, lines, rows, bySeq, refs }: {
    runId: string;
    lines: readonly string[];
    rows: number;
    bySeq: ReadonlyMap<number, unknown>;
    refs: ReadonlyMap<number, string[]>;
  },
): Problem[] {
  const problems: Problem[] = [];
  for (const seq of refs.keys()) {
    if (!bySeq.has(seq)) {
      problems.push(
        problem("rows.refs_differ", `provevi_event_refs (run_id "${runId}", seq ${seq}) has no event row`),
      );
    }
  }
  const missing = lines.map((_, i) => i).filter((i) => !bySeq.has(i));
  if (missing.length) {
    const cut = missing.length === lines.length - rows && missing[0] === rows;
    problems.push(problem(
      "rows.events_missing",
      cut
        ? `events.jsonl has ${lines.length} lines, but provevi_events holds ${rows} rows of run "${runId}": lines ${
          rows + 1
        }–${lines.length} are not in the store`
        : `provevi_events lacks the rows of run "${runId}" for seq ${missing.join(", ")}`,
    ));
  }
  return problems;
}

/** The URIs of each event's refs, by `seq`. */
async function eventRefRows(db: RowSource, runId: string): Promise<Map<number, string[]>> {
  const refs = new Map<number, string[]>();
  for (
    const r of await db.all(
      "SELECT seq, n, uri FROM provevi_event_refs WHERE run_id = ? ORDER BY seq, n",
      runId,
    )
  ) {
    const { seq, uri } = r as { seq: number; uri: string };
    refs.set(Number(seq), [...(refs.get(Number(seq)) ?? []), uri]);
  }
  return refs;
}

/** The event an event row's line holds, or null (reported) when it holds none. */
function eventOfRow(
  row: { seq: number; line: string },
  to: { runId: string; problems: Problem[] },
): EvidenceEvent | null {
  const key = `provevi_events (run_id "${to.runId}", seq ${row.seq})`;
  let event: EvidenceEvent;
  try {
    event = JSON.parse(row.line) as EvidenceEvent;
  } catch {
    to.problems.push(problem("rows.event_differs", `${key}: its line is not JSON`));
    return null;
  }
  if (typeof event !== "object" || event === null || Array.isArray(event)) {
    to.problems.push(problem("rows.event_differs", `${key}: its line is not a JSON object`));
    return null;
  }
  return event;
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
    problems: Problem[];
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
async function payloadRowProblems(db: RowSource, runId: string, folder: string): Promise<string[]> {
  const problems: string[] = [];
  const payloadRows = new Map(
    (await db.all("SELECT sha256, size, place FROM provevi_payloads WHERE run_id = ?", runId) as unknown as {
      sha256: string;
      size: number;
      place: string;
    }[]).map((p) => [p.sha256, p]),
  );
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
  for (const [sha256, { size, packed }] of stored) {
    if (sha256.includes(".tmp-")) continue;
    const row = payloadRows.get(sha256);
    const key = `provevi_payloads (run_id "${runId}", sha256 ${sha256})`;
    const place = payloadPlace(sha256, packed);
    if (!row) problems.push(`${key} is missing`);
    else {
      if (Number(row.size) !== size) {
        problems.push(`${key}: size is ${row.size}, but the ${packed ? "record" : "file"} has ${size} bytes`);
      }
      if (row.place !== place) problems.push(`${key}: place is ${show(row.place)}, not ${place}`);
    }
  }
  for (const sha256 of payloadRows.keys()) {
    if (!stored.has(sha256)) {
      problems.push(
        `provevi_payloads (run_id "${runId}", sha256 ${sha256}) has no file in payloads/ nor record in payloads.pack`,
      );
    }
  }
  return problems;
}

/** Where the store says the bundle was committed, against `bundle.json` (or the bundle a copy came from). */
async function bundleRowProblems(
  run: Record<string, SqlValue>,
  of: { runKey: string; folder: string; bundle: string | null | undefined; problems: Problem[] },
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

async function createdRowProblems(db: RowSource, runId: string, created: EvidenceEvent): Promise<string[]> {
  const problems: string[] = [];
  const get = async (sql: string, ...params: SqlValue[]) => (await db.all(sql, ...params))[0];
  const { params: want, agent, experiment } = createdRows(created);
  const have = new Map(
    (await db.all("SELECT key, value FROM provevi_run_params WHERE run_id = ?", runId) as unknown as {
      key: string;
      value: string;
    }[])
      .map((p) => [p.key, p.value]),
  );
  for (const [key, value] of want) {
    const k = `provevi_run_params (run_id "${runId}", key ${key})`;
    if (!have.has(key)) problems.push(`${k} is missing`);
    else if (have.get(key) !== value) {
      problems.push(`${k}: value is ${have.get(key)}, but its events say ${value}`);
    }
  }
  for (const key of have.keys()) {
    if (!want.has(key)) {
      problems.push(`provevi_run_params (run_id "${runId}", key ${key}) is not a setting its events give`);
    }
  }
  if (agent) {
    const a = await get("SELECT org, domain, env, name FROM provevi_agents WHERE agent = ?", agent.agent) as
      | Record<string, SqlValue>
      | undefined;
    const k = `provevi_agents (agent ${agent.agent})`;
    if (!a) problems.push(`${k} is missing`);
    else {
      for (const c of ["org", "domain", "env", "name"] as const) {
        if (a[c] !== agent[c]) {
          problems.push(`${k}: column ${c} is ${show(a[c])}, but the run's events say ${show(agent[c])}`);
        }
      }
    }
    const v = await get(
      "SELECT backend, model, tools, limits FROM provevi_agent_versions WHERE agent = ? AND version = ?",
      agent.agent,
      agent.version,
    ) as Record<string, SqlValue> | undefined;
    const kv = `provevi_agent_versions (agent ${agent.agent}, version ${agent.version})`;
    if (!v) problems.push(`${kv} is missing`);
    else {
      for (const c of ["backend", "model", "tools", "limits"] as const) {
        if (v[c] !== agent[c]) {
          problems.push(`${kv}: column ${c} is ${show(v[c])}, but the run's events say ${show(agent[c])}`);
        }
      }
    }
  }
  if (experiment) {
    const k = `provevi_experiments (experiment ${experiment.experiment})`;
    if (
      !await get("SELECT 1 AS found FROM provevi_experiments WHERE experiment = ?", experiment.experiment)
    ) {
      problems.push(`${k} is missing`);
    }
    if (experiment.pin) {
      const v = await get(
        "SELECT sha256 FROM provevi_experiment_versions WHERE experiment = ? AND pin = ?",
        experiment.experiment,
        experiment.pin,
      ) as { sha256: string | null } | undefined;
      const kv = `provevi_experiment_versions (experiment ${experiment.experiment}, pin ${experiment.pin})`;
      if (!v) problems.push(`${kv} is missing`);
      else if (v.sha256 !== experiment.sha256) {
        problems.push(
          `${kv}: sha256 is ${show(v.sha256)}, but the run's events say ${show(experiment.sha256)}`,
        );
      }
    }
  }
  return problems;
}

/**
 * The rows of agent classes, experiments and their versions that name the run as their first run must be the
 * ones its events give: a forged row cannot borrow a real run as its first.
 */
async function firstRunProblems(
  db: RowSource,
  runId: string,
  created: EvidenceEvent | null,
): Promise<string[]> {
  const problems: string[] = [];
  const { agent, experiment } = createdRows(created);
  const named = async (sql: string) => await db.all(sql, runId) as Record<string, string>[];
  const says = `names run "${runId}" as its first run, but the run's events do not give it`;
  for (const r of await named("SELECT agent FROM provevi_agents WHERE first_run = ?")) {
    if (r.agent !== agent?.agent) problems.push(`provevi_agents (agent ${r.agent}) ${says}`);
  }
  for (const r of await named("SELECT agent, version FROM provevi_agent_versions WHERE first_run = ?")) {
    if (r.agent !== agent?.agent || r.version !== agent?.version) {
      problems.push(`provevi_agent_versions (agent ${r.agent}, version ${r.version}) ${says}`);
    }
  }
  for (const r of await named("SELECT experiment FROM provevi_experiments WHERE first_run = ?")) {
    if (r.experiment !== experiment?.experiment) {
      problems.push(`provevi_experiments (experiment ${r.experiment}) ${says}`);
    }
  }
  for (
    const r of await named("SELECT experiment, pin FROM provevi_experiment_versions WHERE first_run = ?")
  ) {
    if (r.experiment !== experiment?.experiment || r.pin !== experiment?.pin) {
      problems.push(`provevi_experiment_versions (experiment ${r.experiment}, pin ${r.pin}) ${says}`);
    }
  }
  return problems;
}

/** Each assessment of the run must judge an event or a span that the run has, with a JSON value. */
async function assessmentProblems(db: RowSource, runId: string, events: EvidenceEvent[]): Promise<string[]> {
  const problems: string[] = [];
  const seqs = new Set(events.map((e) => e.seq));
  const spans = new Set(events.map((e) => e.span_id).filter((s) => typeof s === "string").map(columnText));
  const rows = await db.all(
    "SELECT id, seq, span_id, value FROM provevi_assessments WHERE run_id = ? ORDER BY id",
    runId,
  ) as unknown as { id: number; seq: number | null; span_id: string | null; value: string }[];
  for (const a of rows) {
    const key = `provevi_assessments (id ${a.id}, run_id "${runId}")`;
    if (a.seq !== null && !seqs.has(Number(a.seq))) {
      problems.push(`${key} judges event ${a.seq}, which the run lacks`);
    }
    if (a.span_id !== null && !spans.has(a.span_id)) {
      problems.push(`${key} judges span ${a.span_id}, which the run lacks`);
    }
    try {
      JSON.parse(a.value);
    } catch {
      problems.push(`${key}: its value is not JSON`);
    }
  }
  return problems;
}

/** The text of an evidence file, or null when it is missing; a file that cannot be read is a problem. */
async function readOrNull(
  path: string,
  problems: Problem[],
  read: (path: string) => Promise<string | null> = readEvidenceText,
): Promise<string | null> {
  try {
    return await read(path);
  } catch (error) {
    problems.push(problem("rows.unreadable", `${path} cannot be read: ${(error as Error).message}`));
    return null;
  }
}
