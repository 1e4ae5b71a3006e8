/**
 * The runs of a store as a person reads them: one row per run with its status (completed, failed, cancelled,
 * running, cut), start, duration, agent, model, tokens, recorded cost and experiment, newest first (or oldest first), filtered
 * and paged. The
 * sqlite store answers in SQL, over its index of runs; the file store reads each run's manifest and the first
 * and last lines of its `events.jsonl`, and reads the whole file only for the runs of the page (for tokens).
 * @module
 */
import { join } from "node:path";
import { ProveviError } from "../evidence/errors.ts";
import { readLinesCapped } from "../evidence/events_file.ts";
import { EVENT_LINE_MAX_BYTES } from "../evidence/json_depth.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "../evidence/payload_pack.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import { runWriterState } from "../evidence/writer_process.ts";
import { evidencePaths, FileStore } from "../store/file_store.ts";
import type { EvidenceStore } from "../store/store.ts";
import { SqliteStore } from "../sqlite/sqlite_store.ts";
import { PostgresStore } from "../postgres/postgres_store.ts";
import { runFields, type SqlValue, withoutSelector } from "../store/store_rows.ts";
import { firstLine, lastLine } from "./_run_lines.ts";
import {
  anyLonger,
  type Dialect,
  listed,
  postgresDialect,
  refuseLongTexts,
  sqliteDialect,
} from "./_list_dialect.ts";

/**
 * How a run stands: `completed` and `failed` as its ending event says; `cancelled`, a run that failed with
 * `CancelledError` (Ctrl-C, SIGTERM, a limit); `running`, a run with no ending whose writer is alive or cannot
 * be seen from here; `cut`, a run whose record stops without an ending event and whose writer is gone (see
 * `writer_process.ts`), or that was sealed without one.
 */
export type RunListStatus = "completed" | "failed" | "cancelled" | "running" | "cut";

/** The statuses of {@linkcode RunListStatus}, in the order `prove runs --help` names them. */
export const RUN_LIST_STATUSES: readonly RunListStatus[] = [
  "completed",
  "failed",
  "cancelled",
  "running",
  "cut",
];

/** One run in a listing; the names are the evidence's (snake_case), as `--json` prints them. */
export interface RunRow {
  run_id: string;
  status: RunListStatus;
  /** The time of `run_created`. */
  started_at: string | null;
  /** The time of the ending event, or null. */
  ended_at: string | null;
  /** From the start to the end; to now for a running run; to the last event for a cut one. */
  duration_ms: number | null;
  /** The agent class, `org/domain/env/name`. */
  agent: string | null;
  /** The SHA-256 of the agent's settings: its version. */
  agent_version: string | null;
  /** The model route, such as `anthropic:claude-sonnet-4-5` or `test:answer`. */
  model: string | null;
  /** Input and output tokens of every model call, or null when the run made none. */
  tokens: number | null;
  /** The cost the run recorded in its last event (`data.cost.amount`, a decimal text), or null; `listRuns` always gives it. */
  cost?: string | null;
  /** The experiment, pinned when the run pinned it. */
  experiment: string | null;
  /** The seq of the last event written: for a cut run, where it was cut. */
  last_seq: number | null;
}

/** What {@linkcode listRuns} keeps, and which page. */
export interface ListRunsOptions {
  /** Only runs of this status. */
  status?: RunListStatus;
  /** Only runs that started at or after this time (RFC 3339, UTC). */
  since?: string;
  /** Only runs of this agent class: `org/domain/env/name`, or its name. */
  agent?: string;
  /**
   * Only runs that named this experiment: its URI, or its name (the last parts of its URI, such as `q3` or
   * `credit/q3`, as `prove experiment show` takes it); with `?at=…`, only the runs of that version.
   */
  experiment?: string;
  /** At most this many rows (all by default). */
  limit?: number;
  /** Skip this many rows, in the order listed. */
  offset?: number;
  /** List the oldest run first, as the seed's `prove runs` does; newest first by default. */
  oldestFirst?: boolean;
}

/** A page of runs and how many runs the filters keep in all. */
export interface RunList {
  runs: RunRow[];
  total: number;
}

/** A store that lists its runs itself (the postgres store may). */
interface ListingStore {
  listRuns(options: ListRunsOptions): Promise<RunList>;
}

/**
 * Lists a store's runs, newest first (or oldest first).
 *
 * @param store The store.
 * @param options Filters and page.
 * @returns The page and the number of runs that pass the filters.
 * @throws ProveviError when the file store's runs root does not exist, or an option cannot be used.
 * @example
 * ```ts
 * import { FileStore, listRuns } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const { runs, total } = await listRuns(store, { status: "completed", limit: 20 });
 * assert.equal(total, 1);
 * assert.equal(runs[0]!.run_id, "run-20261129T120000Z-0badc0de");
 * ```
 */
export async function listRuns(store: EvidenceStore, options: ListRunsOptions = {}): Promise<RunList> {
  checkOptions(options);
  if (store instanceof SqliteStore) return await listIndexed(sqliteDialect(store), options);
  if (store instanceof PostgresStore) return await listIndexed(postgresDialect(store), options);
  const own = (store as Partial<ListingStore>).listRuns;
  if (typeof own === "function") return await own.call(store, options);
  return await listFolders(store, options);
}

function checkOptions(options: ListRunsOptions): void {
  if (options.status !== undefined && !RUN_LIST_STATUSES.includes(options.status)) {
    throw new ProveviError(
      `"${options.status}" is not a run status: use one of ${RUN_LIST_STATUSES.join(", ")}`,
    );
  }
  for (const [name, n] of [["limit", options.limit], ["offset", options.offset]] as const) {
    if (n !== undefined && (!Number.isSafeInteger(n) || n < 0)) {
      throw new ProveviError(`--${name} ${n} is not a count: give a whole number, 0 or more`);
    }
  }
  if (options.since !== undefined && Number.isNaN(Date.parse(options.since))) {
    throw new ProveviError(
      `--since ${options.since} is not a time: give 2026-11-30, 2026-11-30T14:00:00Z or 2h`,
    );
  }
}

/** The agent filter: a full class, or a name that matches the class's last part. */
function agentMatches(agent: string | null, wanted: string): boolean {
  if (agent === null) return false;
  return wanted.includes("/") ? agent === wanted : agent.slice(agent.lastIndexOf("/") + 1) === wanted;
}

/**
 * Whether an experiment's URI is the one a user named: the whole URI (`experiment://org/domain/env/q3`), or a
 * name, the last parts of it (`q3`, `credit/q3`), as the store's questions by experiment take it.
 */
function experimentNamed(experiment: string, named: string): boolean {
  return named.includes("://")
    ? experiment === named
    : experiment === named || experiment.endsWith(`/${named}`);
}

function experimentMatches(row: { experiment: string | null; pin: string | null }, wanted: string): boolean {
  const base = withoutSelector(wanted);
  if (base !== wanted) {
    // A pinned version: the pin is the experiment's URI with the same selector.
    if (row.pin === null) return false;
    const pinBase = withoutSelector(row.pin);
    return experimentNamed(pinBase, base) && row.pin.slice(pinBase.length) === wanted.slice(base.length);
  }
  return row.experiment !== null && experimentNamed(row.experiment, base);
}

function sinceIso(since: string): string {
  return new Date(Date.parse(since)).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

function ms(from: string | null, to: string | null): number | null {
  if (from === null || to === null) return null;
  const d = Date.parse(to) - Date.parse(from);
  return Number.isNaN(d) ? null : Math.max(0, d);
}

/** The status of a run that has no ending event. */
async function openStatus(sealed: boolean, folder: string | null, writer: unknown): Promise<RunListStatus> {
  if (sealed) return "cut";
  return (await runWriterState(folder, writer)) === "gone" ? "cut" : "running";
}

function endStatus(type: string | null, error: unknown): RunListStatus | null {
  if (type === "run_completed") return "completed";
  if (type === "run_failed") return error === "CancelledError" ? "cancelled" : "failed";
  return null;
}

function durationOf(row: Pick<RunRow, "status" | "started_at" | "ended_at">, lastTime: string | null) {
  if (row.ended_at !== null) return ms(row.started_at, row.ended_at);
  if (row.status === "running") return ms(row.started_at, new Date().toISOString());
  return ms(row.started_at, lastTime);
}

// ---------------------------------------------------------------------------------------------------------
// The sqlite store: SQL over provevi_runs (its primary key orders the runs; the agent and experiment columns
// have indexes), and for the rows of the page, their first event and their events' tokens.

interface SqlRunRow {
  run_id: string;
  folder: string;
  status: string;
  sealed_at: string | null;
  started_at: string | null;
  ended_at: string | null;
  agent: string | null;
  agent_version: string | null;
  experiment: string | null;
  experiment_pin: string | null;
  model: string | null;
  writer: string | null;
}

/** A row of the page, with what the listing reads of its events: the last one, the tokens, a cancellation. */
interface SqlPageRow extends SqlRunRow {
  last_seq: number | string | null;
  last_time: string | null;
  tokens: number | string | null;
  cost: string | null;
  cancelled: number | boolean | null;
}

/**
 * The conditions of the agent and experiment filters, each by a whole name or a bare one; null when a filter
 * names nothing, so that no run can pass. The classes and experiments of a bare name are looked up first (they
 * are few), so that the page's query names them and reads the indexes provevi_runs_agent_status and
 * provevi_runs_experiment_status (a subquery there would hide from the planner how few they are).
 */
async function namedFilters(
  d: Dialect,
  options: ListRunsOptions,
  p: (value: SqlValue) => string,
): Promise<string[] | null> {
  const where: string[] = [];
  if (options.agent !== undefined) {
    const classes = options.agent.includes("/")
      ? [options.agent]
      : ((await d.all(`SELECT agent FROM provevi_agents WHERE name = ${d.param(1)} ORDER BY agent`, [
        options.agent,
      ])) as { agent: string }[]).map((r) => r.agent);
    if (classes.length === 0) return null;
    where.push(
      classes.length === 1 ? `r.agent = ${p(classes[0]!)}` : `r.agent IN (${classes.map(p).join(", ")})`,
    );
  }
  if (options.experiment !== undefined) {
    const base = withoutSelector(options.experiment);
    const selector = options.experiment.slice(base.length);
    const named = base.includes("://")
      ? [base]
      : ((await d.all(`SELECT experiment FROM provevi_experiments ORDER BY experiment`, [])) as {
        experiment: string;
      }[]).map((r) => r.experiment).filter((e) => experimentNamed(e, base));
    if (named.length === 0) return null;
    const column = selector === "" ? "r.experiment" : "r.experiment_pin";
    const values = named.map((e) => p(e + selector));
    where.push(values.length === 1 ? `${column} = ${values[0]}` : `${column} IN (${values.join(", ")})`);
  }
  return where;
}

async function listIndexed(d: Dialect, options: ListRunsOptions): Promise<RunList> {
  const where: string[] = [];
  const params: SqlValue[] = [];
  const p = (value: SqlValue) => {
    params.push(value);
    return d.param(params.length);
  };
  if (options.since !== undefined) where.push(`r.started_at >= ${p(sinceIso(options.since))}`);
  const named = await namedFilters(d, options, p);
  if (named === null) return { runs: [], total: 0 };
  where.push(...named);
  // The cancelled runs are few and have an index of their own (provevi_events_cancelled).
  const cancelled = d.cancelled("r");
  const open = options.status === "running" || options.status === "cut";
  // A run that ended but was never sealed (its writer killed at the seal) is cut when its writer is gone: it is
  // read with the open ones, and left out of the ended ones.
  // The unsealed runs are few, and have an index of their own (provevi_runs_unsealed).
  const unsealed = "SELECT u.run_id FROM provevi_runs u WHERE u.sealed_at IS NULL";
  const sealed = `r.run_id NOT IN (${unsealed})`;
  if (options.status === "completed") where.push(`r.status = 'completed' AND ${sealed}`);
  if (options.status === "failed") where.push(`r.status = 'failed' AND ${sealed} AND NOT ${cancelled}`);
  if (options.status === "cancelled") where.push(`r.status = 'failed' AND ${sealed} AND ${cancelled}`);
  if (open) {
    where.push(`r.run_id IN (SELECT o.run_id FROM provevi_runs o WHERE o.status IN ('running', 'incomplete')
      UNION ${unsealed})`);
  }
  const whereSql = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const order = options.oldestFirst ? "ASC" : "DESC";
  const offset = options.offset ?? 0;
  const limit = options.limit === undefined || open ? "" : ` LIMIT ${p(options.limit)}`;
  const off = offset === 0 || open ? "" : `${limit === "" ? d.noLimit : ""} OFFSET ${p(offset)}`;
  const select = pageSql(d, { whereSql, order, limit, off });
  let page = (await d.all(select, params)) as unknown as SqlPageRow[];
  refuseLongTexts(page as unknown as Record<string, unknown>[], d.uri);
  let total: number;
  if (open) {
    // Running and cut differ by whether the writer is alive, which only this process can see: the rows that
    // have no ending are few, so they are all read and told apart here.
    const all: SqlPageRow[] = [];
    for (const r of page) if ((await indexedStatus(r)) === options.status) all.push(r);
    total = all.length;
    page = all.slice(offset, options.limit === undefined ? undefined : offset + options.limit);
  } else if (offset === 0 && (options.limit === undefined || page.length < options.limit)) {
    total = page.length; // the whole list is on the page
  } else {
    const countParams = params.slice(0, params.length - (limit ? 1 : 0) - (off ? 1 : 0));
    const [counted] = await d.all(`SELECT count(*) AS n FROM provevi_runs r ${whereSql}`, countParams);
    total = Number(counted?.n ?? 0);
  }
  const runs: RunRow[] = [];
  for (const r of page) runs.push(await pageRow(d, r));
  return { total, runs };
}

/**
 * The SQL of a page of an indexed store's listing: the page is chosen first (from the indexes of provevi_runs
 * alone), and only its rows read their events: the first (model, writer), the last, the tokens of the model
 * calls, and whether a failure was a cancellation. One statement, so one round trip to a postgres server.
 */
function pageSql(d: Dialect, q: { whereSql: string; order: string; limit: string; off: string }): string {
  const { whereSql, order, limit, off } = q;
  // Each text as long as a name, a time or a folder at most (a changed store's row may hold any): a longer
  // one is not read, and the listing is refused (`wide`).
  const texts = ["folder", "status", "sealed_at", "started_at", "ended_at", "agent", "agent_version"];
  texts.push("experiment", "experiment_pin");
  const last = (what: string) =>
    `(SELECT ${what} FROM provevi_events l WHERE l.run_id = p.run_id ORDER BY l.seq DESC LIMIT 1)`;
  const read: [string, string][] = [
    ["model", d.json("e.line", "data.model")],
    ["writer", d.json("e.line", "data.writer", "object")],
    ["last_seq", last("l.seq")],
    ["last_time", last("l.time")],
    ["cost", last(d.json("l.line", "data.cost.amount"))],
  ];
  return `WITH page AS MATERIALIZED (
      SELECT ${listed("r.run_id")} AS run_id, ${texts.map((c) => `${listed(`r.${c}`)} AS ${c}`).join(", ")},
        ${anyLonger(["r.run_id", ...texts.map((c) => `r.${c}`)])} AS wide_row
      FROM provevi_runs r ${whereSql} ORDER BY r.run_id ${order}${limit}${off}
    )
    SELECT p.*, ${read.map(([name, sql]) => `${listed(sql)} AS ${name}`).join(", ")},
      CASE WHEN p.wide_row = 1 THEN 1 ELSE ${anyLonger(read.map(([, sql]) => sql))} END AS wide,
      (SELECT sum(coalesce(${d.json("t.line", "data.input_tokens", "number")}, 0)
          + coalesce(${d.json("t.line", "data.output_tokens", "number")}, 0))
       FROM provevi_events t WHERE t.run_id = p.run_id AND t.type = 'model_called') AS tokens,
      CASE WHEN p.status = 'failed' THEN ${d.cancelled("p")} END AS cancelled
    FROM page p LEFT JOIN provevi_events e ON e.run_id = p.run_id AND e.seq = 0
    ORDER BY p.run_id ${order}`;
}

/** A row of the page as the listing gives it. */
async function pageRow(d: Dialect, r: SqlPageRow): Promise<RunRow> {
  const row: RunRow = {
    run_id: r.run_id,
    status: await indexedStatus(r),
    started_at: r.started_at,
    ended_at: r.ended_at,
    duration_ms: null,
    agent: r.agent,
    agent_version: r.agent_version,
    model: d.text(r.model),
    tokens: r.tokens === null ? null : Number(r.tokens),
    cost: d.text(r.cost),
    experiment: r.experiment_pin ?? r.experiment,
    last_seq: r.last_seq === null ? null : Number(r.last_seq),
  };
  row.duration_ms = durationOf(row, r.last_time);
  return row;
}

/** The status of a run on the page: its row's, and whether its writer is gone for one with no seal. */
async function indexedStatus(r: SqlPageRow): Promise<RunListStatus> {
  if ((r.status === "completed" || r.status === "failed") && r.sealed_at === null) {
    // Its writer was killed after its last event but before the seal (harden's kill test): it is cut.
    let writer: unknown = null;
    try {
      writer = r.writer === null ? null : JSON.parse(r.writer);
    } catch { /* an old run: no writer */ }
    if ((await runWriterState(r.folder, writer)) === "gone") return "cut";
  }
  if (r.status === "completed") return "completed";
  if (r.status === "failed") return r.cancelled ? "cancelled" : "failed";
  let writer: unknown = null;
  try {
    writer = r.writer === null ? null : JSON.parse(r.writer);
  } catch { /* an old run: no writer */ }
  return await openStatus(r.status === "incomplete", r.folder, writer);
}

// ---------------------------------------------------------------------------------------------------------
// The file store (and any store without an index): each run's manifest and first and last lines.

interface FolderRun {
  row: RunRow;
  /** The experiment as named, without its selector, and its pin. */
  experiment: string | null;
  pin: string | null;
  folder: string;
}

async function listFolders(store: EvidenceStore, options: ListRunsOptions): Promise<RunList> {
  if (store instanceof FileStore) await checkRunsRoot(store.runsRoot);
  const ids = await store.runIds(); // oldest first
  if (!options.oldestFirst) ids.reverse();
  const kept: FolderRun[] = [];
  const since = options.since === undefined ? null : Date.parse(options.since);
  for (const id of ids) {
    const run = await readFolderRun(store, id);
    if (run === null) continue;
    const { row } = run;
    if (options.status !== undefined && row.status !== options.status) continue;
    if (options.agent !== undefined && !agentMatches(row.agent, options.agent)) continue;
    if (
      options.experiment !== undefined &&
      !experimentMatches({ experiment: run.experiment, pin: run.pin }, options.experiment)
    ) continue;
    if (since !== null && (row.started_at === null || Date.parse(row.started_at) < since)) continue;
    kept.push(run);
  }
  const offset = options.offset ?? 0;
  const page = kept.slice(offset, options.limit === undefined ? undefined : offset + options.limit);
  for (const run of page) await addWholeFile(run);
  return { runs: page.map((r) => r.row), total: kept.length };
}

async function checkRunsRoot(root: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(root);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new ProveviError(
        `the runs root ${root} does not exist: check --runs or PROVRUN_RUNS, or make a run first (provr run)`,
        { cause: error },
      );
    }
    throw error;
  }
  if (!info.isDirectory) {
    throw new ProveviError(`the runs root ${root} is not a folder: check --runs or PROVRUN_RUNS`);
  }
}

function parseEvent(line: string | null): EvidenceEvent | null {
  if (line === null) return null;
  try {
    const event = JSON.parse(line);
    return typeof event === "object" && event !== null && !Array.isArray(event)
      ? event as EvidenceEvent
      : null;
  } catch {
    return null;
  }
}

async function orNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch {
    return null;
  }
}

async function readFolderRun(store: EvidenceStore, id: string): Promise<FolderRun | null> {
  const record = await orNull(() => store.readRun(id));
  if (record === null || record.folder === null) return null;
  const paths = evidencePaths(record.folder);
  const first = parseEvent(await orNull(() => firstLine(paths.events)));
  const last = parseEvent(await orNull(() => lastLine(paths.events)));
  // Only whether the seal is there, a plain file: not read (it may be past a line's bound, and 512 MiB).
  const manifest = await Deno.lstat(paths.manifest).then((i) => i.isFile ? true : null, () => null);
  const created = first?.type === "run_created" ? first : null;
  const fields = runFields(created);
  const ending = endStatus(last?.type ?? null, last?.data?.error);
  // A run whose writer was killed after its last event but before its manifest (harden's kill test) is cut.
  const unsealed = ending !== null && manifest === null &&
    (await runWriterState(record.folder, created?.data?.writer)) === "gone";
  const status = (unsealed ? null : ending) ??
    await openStatus(manifest !== null, record.folder, created?.data?.writer);
  const row: RunRow = {
    run_id: id,
    status,
    started_at: fields.started_at,
    ended_at: ending !== null ? last!.time : null,
    duration_ms: null,
    agent: fields.agent,
    agent_version: fields.agent_version,
    model: typeof created?.data?.model === "string" ? created.data.model : null,
    tokens: null,
    cost: recordedCost(ending === null ? null : last),
    experiment: fields.experiment_pin ?? fields.experiment,
    last_seq: typeof last?.seq === "number" ? last.seq : null,
  };
  row.duration_ms = durationOf(row, typeof last?.time === "string" ? last.time : null);
  return { row, experiment: fields.experiment, pin: fields.experiment_pin, folder: record.folder };
}

/** The cost a run's last event records (`data.cost.amount`), or null. */
function recordedCost(last: EvidenceEvent | null): string | null {
  const cost = last?.data?.cost;
  if (typeof cost !== "object" || cost === null || Array.isArray(cost)) return null;
  return typeof cost.amount === "string" ? cost.amount : null;
}

/** The tokens of every model call, read from the whole `events.jsonl` of a run on the page. */
async function addWholeFile(run: FolderRun): Promise<void> {
  const text = await orNull(() => readCappedText(join(run.folder, "evidence", "events.jsonl")));
  if (text === null) return;
  let tokens: number | null = null;
  for (const line of text.split("\n")) {
    if (!line.includes('"model_called"')) continue;
    const event = parseEvent(line);
    if (event?.type !== "model_called") continue;
    const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
    tokens = (tokens ?? 0) + n(event.data?.input_tokens) + n(event.data?.output_tokens);
  }
  run.row.tokens = tokens;
}

/**
 * `events.jsonl`'s text, with the bounds of every reader of it: a link, a pipe or a file past what a reader takes
 * is refused, not waited on, and so is a line past {@linkcode EVENT_LINE_MAX_BYTES}, as it comes.
 */
async function readCappedText(path: string): Promise<string> {
  return new TextDecoder().decode(await readLinesCapped(path, EVIDENCE_TEXT_MAX_BYTES, EVENT_LINE_MAX_BYTES));
}
