/**
 * The check of a run against an indexed store (sqlite, postgres): every row that the run implies must match
 * the run's lines, files and events. Each problem names the table and the row's key, so a changed or deleted
 * row is found. The store reads its rows through a {@linkcode RowSource}, so both stores run the same check.
 * @module
 */
import { join } from "node:path";
import type { EvidenceEvent } from "../evidence/event.ts";
import { evidencePaths, readEvidenceText } from "./file_store.ts";
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
import { readEventsText } from "../evidence/verify.ts";
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
 * @returns The problems (`rows.schema`, `rows.differ`), each naming the table and the row's key; empty when the rows
 *   match.
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
  options: { schema?: string[]; folder?: string | null; bundle?: string | null } = {},
): Promise<Problem[]> {
  const { schema = [], ...rest } = options;
  return [
    ...schema.map((p) => problem("rows.schema", `store: ${p}`)),
    ...(await storeRowTexts(db, runId, rest)).map((p) => problem("rows.differ", p)),
  ];
}

async function storeRowTexts(
  db: RowSource,
  runId: string,
  options: { schema?: string[]; folder?: string | null; bundle?: string | null } = {},
): Promise<string[]> {
  const problems = (options.schema ?? []).map((p) => `store: ${p}`);
  const get = async (sql: string, ...params: SqlValue[]) => (await db.all(sql, ...params))[0];
  const runKey = `provevi_runs (run_id "${runId}")`;
  const run = await get("SELECT * FROM provevi_runs WHERE run_id = ?", runId) as
    | Record<string, SqlValue>
    | undefined;
  if (!run) return [...problems, `${runKey} is missing: the store holds no row for the run`];
  const folder = options.folder ?? String(run.folder);
  const paths = evidencePaths(folder);
  const text = await readOrNull(paths.events, problems);
  const manifest = await readOrNull(paths.manifest, problems);
  const rows = (await db.all("SELECT * FROM provevi_events WHERE run_id = ? ORDER BY seq", runId)).map((
    r,
  ) => ({
    ...r,
    seq: Number(r.seq),
  })) as (
    & Record<string, SqlValue>
    & { seq: number; line: string }
  )[];
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

  // The rows against the lines.
  const lines = text === null ? [] : readEventsText(text).lines;
  if (text === null) {
    problems.push(`the run's events.jsonl is missing, so its ${rows.length} event rows have no lines`);
  }
  const bySeq = new Map(rows.map((r) => [Number(r.seq), r]));
  const rowEvents: EvidenceEvent[] = [];
  for (const row of rows) {
    const seq = Number(row.seq);
    const key = `provevi_events (run_id "${runId}", seq ${seq})`;
    let event: EvidenceEvent;
    try {
      event = JSON.parse(row.line) as EvidenceEvent;
    } catch {
      problems.push(`${key}: its line is not JSON`);
      continue;
    }
    if (typeof event !== "object" || event === null || Array.isArray(event)) {
      problems.push(`${key}: its line is not a JSON object`);
      continue;
    }
    rowEvents.push(event);
    const line = lines[seq];
    if (text !== null && line === undefined) problems.push(`${key} has no line in events.jsonl`);
    else if (line !== undefined && line !== row.line) {
      problems.push(`${key}: its line differs from line ${seq + 1} of events.jsonl`);
    }
    for (const c of EVENT_COLUMNS) {
      const want = columnValue((event[c] ?? null) as SqlValue);
      if (row[c] !== want) {
        problems.push(`${key}: column ${c} is ${show(row[c])}, but its line says ${show(want)}`);
      }
    }
    const uris = refs.get(seq) ?? [];
    const named = eventRefs(event);
    if (JSON.stringify(uris) !== JSON.stringify(named)) {
      problems.push(
        `provevi_event_refs (run_id "${runId}", seq ${seq}) holds ${show(uris)}, but the event's line names ${
          show(named)
        }`,
      );
    }
    const expectedPrev = seq === 0
      ? null
      : bySeq.has(seq - 1)
      ? sha256Hex(bySeq.get(seq - 1)!.line)
      : undefined;
    if (expectedPrev !== undefined && event.prev !== expectedPrev) {
      problems.push(
        `${key}: the chain does not cover its line: prev is ${show(event.prev)}, expected ${
          show(expectedPrev)
        }`,
      );
    }
  }
  for (const seq of refs.keys()) {
    if (!bySeq.has(seq)) problems.push(`provevi_event_refs (run_id "${runId}", seq ${seq}) has no event row`);
  }
  const missing = lines.map((_, i) => i).filter((i) => !bySeq.has(i));
  if (missing.length) {
    const cut = missing.length === lines.length - rows.length && missing[0] === rows.length;
    problems.push(
      cut
        ? `events.jsonl has ${lines.length} lines, but provevi_events holds ${rows.length} rows of run "${runId}": lines ${
          rows.length + 1
        }–${lines.length} are not in the store`
        : `provevi_events lacks the rows of run "${runId}" for seq ${missing.join(", ")}`,
    );
  }

  // The run's row against its events and files.
  const events = text === null ? rowEvents : lines.map((l) => {
    try {
      return JSON.parse(l) as EvidenceEvent;
    } catch {
      return null;
    }
  }).filter((e): e is EvidenceEvent => typeof e === "object" && e !== null && !Array.isArray(e));
  const created = events[0]?.type === "run_created" ? events[0] : null;
  const fields = createdRows(created).fields;
  for (const c of RUN_FIELD_COLUMNS) {
    if (run[c] !== fields[c]) {
      problems.push(`${runKey}: column ${c} is ${show(run[c])}, but its events say ${show(fields[c])}`);
    }
  }
  const sealed = manifest !== null;
  const end = runEnd(events[events.length - 1] ?? null, sealed);
  if (run.status !== end.status) {
    problems.push(`${runKey}: status is ${show(run.status)}, but its events say ${show(end.status)}`);
  }
  if (run.ended_at !== end.ended_at) {
    problems.push(`${runKey}: ended_at is ${show(run.ended_at)}, but its events say ${show(end.ended_at)}`);
  }
  if (sealed) {
    const hash = sha256Hex(manifest);
    if (run.manifest_sha256 !== hash) {
      problems.push(
        `${runKey}: manifest_sha256 is ${show(run.manifest_sha256)}, but manifest.json hashes to ${hash}`,
      );
    }
    const last = lines.length ? sha256Hex(lines[lines.length - 1]!) : null;
    if (run.last_hash !== last) {
      problems.push(
        `${runKey}: last_hash is ${show(run.last_hash)}, but the last line hashes to ${show(last)}`,
      );
    }
  } else {
    if (run.manifest_sha256 !== null) {
      problems.push(`${runKey}: manifest_sha256 is set, but the run has no manifest.json`);
    }
    problems.push(
      `run "${runId}" was not sealed: provevi_events holds ${rows.length} rows and events.jsonl ${lines.length} lines`,
    );
  }

  // Settings, agent class and version, experiment and version.
  if (created) problems.push(...await createdRowProblems(db, runId, created));
  problems.push(...await firstRunProblems(db, runId, created));
  problems.push(...await assessmentProblems(db, runId, rowEvents));

  // Payloads against their files.
  const payloadRows = new Map(
    (await db.all("SELECT sha256, size, place FROM provevi_payloads WHERE run_id = ?", runId) as unknown as {
      sha256: string;
      size: number;
      place: string;
    }[]).map((p) => [p.sha256, p]),
  );
  const files = new Map<string, number>();
  try {
    for await (const entry of Deno.readDir(paths.payloads)) {
      if (entry.isFile) files.set(entry.name, (await Deno.stat(join(paths.payloads, entry.name))).size);
    }
  } catch { /* verify reports a missing payloads/ */ }
  for (const [sha256, size] of files) {
    if (sha256.includes(".tmp-")) continue;
    const row = payloadRows.get(sha256);
    const key = `provevi_payloads (run_id "${runId}", sha256 ${sha256})`;
    if (!row) problems.push(`${key} is missing`);
    else {
      if (Number(row.size) !== size) {
        problems.push(`${key}: size is ${row.size}, but the file has ${size} bytes`);
      }
      if (row.place !== `evidence/payloads/${sha256}`) {
        problems.push(`${key}: place is ${show(row.place)}, not evidence/payloads/${sha256}`);
      }
    }
  }
  for (const sha256 of payloadRows.keys()) {
    if (!files.has(sha256)) {
      problems.push(`provevi_payloads (run_id "${runId}", sha256 ${sha256}) has no file in payloads/`);
    }
  }

  // Where the bundle was committed.
  if (run.bundle_uri !== null || run.bundle_pinned !== null) {
    const text = await readOrNull(join(folder, "bundle.json"), problems);
    let bundle: { uri?: unknown; pinned?: unknown } | null = null;
    try {
      bundle = text === null ? null : JSON.parse(text);
    } catch { /* below */ }
    if (!bundle && text === null && options.bundle) {
      // A copy of the run taken from its committed bundle has no bundle.json: the caller names the bundle.
      if (columnValue(options.bundle) !== run.bundle_pinned) {
        problems.push(
          `${runKey}: bundle_pinned is ${show(run.bundle_pinned)}, but the bundle given is ${
            show(options.bundle)
          }`,
        );
      }
    } else if (!bundle) {
      problems.push(
        `${runKey}: the store records a bundle at ${
          show(run.bundle_pinned)
        }, but bundle.json is missing or not JSON`,
      );
    } else {
      if (columnValue(bundle.pinned) !== run.bundle_pinned) {
        problems.push(
          `${runKey}: bundle_pinned is ${show(run.bundle_pinned)}, but bundle.json says ${
            show(bundle.pinned)
          }`,
        );
      }
      if (columnValue(bundle.uri) !== run.bundle_uri) {
        problems.push(
          `${runKey}: bundle_uri is ${show(run.bundle_uri)}, but bundle.json says ${show(bundle.uri)}`,
        );
      }
    }
  }
  return problems;
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
async function readOrNull(path: string, problems: string[]): Promise<string | null> {
  try {
    return await readEvidenceText(path);
  } catch (error) {
    problems.push(`${path} cannot be read: ${(error as Error).message}`);
    return null;
  }
}
