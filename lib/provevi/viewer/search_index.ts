/**
 * The viewer's search index of runs: one SQLite database (the built-in `node:sqlite`, with its FTS5 full-text
 * index) of each run's row (status, times, agent, model, experiment), its digest (verdict, calls, errors,
 * tokens, cost, models, tools) and its text at the viewer's level. A run's key orders the runs newest first
 * (its ID's time, then its suffix), so a page of matches is read from the newest and stops when it is full. It
 * holds what the viewer may show and nothing else; it lives in a private temporary folder while the viewer
 * runs (or in memory), and is made again at the next start.
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { RunRow } from "../runs/list_runs.ts";
import type { RunDigest } from "./run_digest.ts";

/** What a search asks for; every part is optional. */
export interface SearchQuery {
  /** Free text: each word must appear, whole, in any order and any case. */
  q?: string;
  status?: string;
  verdict?: string;
  /** An agent class (`org/domain/env/name`), or a bare name. */
  agent?: string;
  model?: string;
  tool?: string;
  /** An experiment, pinned or not. */
  experiment?: string;
  /** Started on or after this date or time. */
  since?: string;
  /** Started before the end of this date, or before this time. */
  until?: string;
  minCost?: number;
  maxCost?: number;
  limit: number;
  offset: number;
}

/** A run the search found: its row and its digest. */
export type SearchRow = RunRow & {
  cost: string | null;
  digest: Omit<RunDigest, "text" | "run_id"> | null;
};

/** What a search found. */
export interface SearchResult {
  runs: SearchRow[];
  /** How many match: all of them, or, when `capped`, at least this many. */
  total: number;
  capped: boolean;
}

/** How many matches past a page a search counts: enough to page on, without reading them all. */
const COUNT_PAST = 200;

/** A date or time as a run ID's time: `2026-11-30` → `20261130T000000Z`. */
function compact(time: string): string {
  const iso = new Date(Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(time) ? time + "T00:00:00Z" : time))
    .toISOString();
  return iso.slice(0, 19).replace(/[-:]/g, "") + "Z";
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  key INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL,
  started_at TEXT, ended_at TEXT, duration_ms REAL,
  agent TEXT, agent_version TEXT, model TEXT, experiment TEXT, tokens INTEGER, last_seq INTEGER,
  verdict TEXT, problems INTEGER, level TEXT, model_calls INTEGER, tool_calls INTEGER, errors INTEGER,
  input_tokens INTEGER, output_tokens INTEGER, cost REAL, cost_text TEXT, currency TEXT,
  models TEXT NOT NULL DEFAULT ' ', tools TEXT NOT NULL DEFAULT ' '
);
CREATE INDEX IF NOT EXISTS runs_status ON runs (status, key);
CREATE INDEX IF NOT EXISTS runs_verdict ON runs (verdict, key);
CREATE INDEX IF NOT EXISTS runs_agent ON runs (agent, key);
CREATE VIRTUAL TABLE IF NOT EXISTS runs_text USING fts5(
  text, content='', contentless_delete=1, detail=none,
  tokenize="unicode61 remove_diacritics 2 tokenchars '_§'"
);
`;

/**
 * The key that orders a run among the others: its ID's second, then the first 20 bits of its suffix, so that
 * newer runs have larger keys (a run ID is `run-<yyyymmddThhmmssZ>-<8 hex>`).
 */
export function runKey(runId: string): number {
  const m = /^run-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-([0-9a-f]{5})/.exec(runId);
  if (!m) {
    let hash = 0;
    for (const c of runId) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
    return hash;
  }
  const seconds = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) / 1000;
  return seconds * 2 ** 21 + parseInt(m[7]!, 16);
}

/**
 * Free text as an FTS5 query: each word whole, all of them required; null when it has no word. A whole word
 * reads its list of runs in order and stops at the page (a prefix would read every word it starts).
 */
export function ftsQuery(text: string): string | null {
  const words = text.normalize("NFKC").match(/[\p{L}\p{N}_]+/gu) ?? [];
  if (!words.length) return null;
  return words.slice(0, 16).map((w) => `"${w.replaceAll('"', '""')}"`).join(" AND ");
}

/**
 * A name as a tag of the index: `§`, its kind's letter, `_`, and the name in lowercase letters, digits and `_`.
 * A search's words are letters, digits and `_` only, so no word a person types is a tag.
 */
export function tag(kind: string, name: string): string {
  return `§${kind}_${name.toLowerCase().replace(/[^a-z0-9]+/g, "_").slice(0, 80)}`;
}

/** The least costs a filter narrows to by tag: a run's cost is tagged with each it reaches. */
const COST_STEPS = [0.0001, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100];

/** The tags of a run: what its filters match, looked up in the full-text index's own lists. */
function tagsOf(row: RunRow, digest: RunDigest | null, cost: number | null): string {
  const tags = [tag("s", row.status), tag("v", digest?.verdict ?? "none")];
  if (row.agent) tags.push(tag("a", row.agent), tag("a", row.agent.split("/").at(-1)!));
  if (row.experiment) tags.push(tag("e", row.experiment.replace(/\?.*$/, "")));
  for (const m of digest?.models ?? []) tags.push(tag("m", m));
  for (const t of digest?.tools ?? []) tags.push(tag("t", t));
  for (const step of COST_STEPS) if (cost !== null && cost >= step) tags.push(tag("c", String(step)));
  return tags.join(" ");
}

/** The end of a `until` day: the next day, for a bare date; the time itself otherwise. */
function untilTime(until: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(until)) return until;
  const next = new Date(Date.parse(until + "T00:00:00Z") + 86_400_000);
  return next.toISOString().slice(0, 10);
}

/** The search index. */
export class SearchIndex {
  readonly db: DatabaseSync;
  readonly #put: StatementSync;
  readonly #putText: StatementSync;
  readonly #dropText: StatementSync;
  readonly #has: StatementSync;
  readonly #taken: StatementSync;
  /** A search's statements, by their SQL: a page's query is made once and run again. */
  readonly #statements = new Map<string, StatementSync>();

  #prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      if (this.#statements.size >= 200) this.#statements.clear();
      this.#statements.set(sql, statement = this.db.prepare(sql));
    }
    return statement;
  }

  /**
   * Opens (or makes) an index.
   *
   * @param path A database file, or `:memory:`.
   */
  constructor(readonly path: string) {
    this.db = new DatabaseSync(path);
    this.db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY;");
    this.db.exec(SCHEMA);
    this.#put = this.db.prepare(
      `INSERT OR REPLACE INTO runs (key, run_id, status, started_at, ended_at, duration_ms, agent, agent_version,
        model, experiment, tokens, last_seq, verdict, problems, level, model_calls, tool_calls, errors,
        input_tokens, output_tokens, cost, cost_text, currency, models, tools)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#putText = this.db.prepare("INSERT INTO runs_text (rowid, text) VALUES (?, ?)");
    this.#taken = this.db.prepare("SELECT 1 AS taken FROM runs WHERE key = ?");
    this.#dropText = this.db.prepare("DELETE FROM runs_text WHERE rowid = ?");
    this.#has = this.db.prepare("SELECT key, status, verdict FROM runs WHERE run_id = ?");
  }

  /** The indexed state of a run: its status and verdict, or null when it is not indexed. */
  known(runId: string): { status: string; verdict: string | null } | null {
    const row = this.#has.get(runId) as { status: string; verdict: string | null } | undefined;
    return row ? { status: row.status, verdict: row.verdict } : null;
  }

  #count: number | null = null;

  /** How many runs are indexed (counted once, then kept as runs are added). */
  count(): number {
    this.#count ??= Number((this.db.prepare("SELECT count(*) AS n FROM runs").get() as { n: number }).n);
    return this.#count;
  }

  /**
   * Adds or replaces a run.
   *
   * @param row The run's row, as the runs page lists it.
   * @param digest Its digest (its text is what a search reads), or null while it runs.
   */
  put(row: RunRow & { cost?: string | null }, digest: RunDigest | null): void {
    let key = runKey(row.run_id);
    const known = this.#has.get(row.run_id) as { key: number } | undefined;
    if (known) key = known.key;
    else {
      // Two runs of the same second whose suffixes start alike: the next free key.
      while (this.#taken.get(key)) key++;
    }
    const cost = digest?.cost?.amount ?? row.cost ?? null;
    const list = (names: string[] | undefined) => " " + (names ?? []).join(" ") + " ";
    this.db.exec("SAVEPOINT put");
    try {
      this.#put.run(
        key,
        row.run_id,
        row.status,
        row.started_at,
        row.ended_at,
        row.duration_ms,
        row.agent,
        row.agent_version,
        row.model,
        row.experiment,
        row.tokens,
        row.last_seq,
        digest?.verdict ?? null,
        digest?.problems ?? null,
        digest?.level ?? null,
        digest?.model_calls ?? null,
        digest?.tool_calls ?? null,
        digest?.errors ?? null,
        digest?.tokens?.input ?? null,
        digest?.tokens?.output ?? null,
        cost === null ? null : Number(cost),
        cost,
        digest?.cost?.currency ?? null,
        list(digest?.models),
        list(digest?.tools),
      );
      if (known) this.#dropText.run(key);
      const tags = tagsOf(row, digest, cost === null ? null : Number(cost));
      this.#putText.run(key, `${digest?.text ?? row.run_id}\n${tags}`);
      this.db.exec("RELEASE put");
      if (!known && this.#count !== null) this.#count++;
    } catch (error) {
      this.db.exec("ROLLBACK TO put; RELEASE put");
      throw error;
    }
  }

  /**
   * The runs that match, newest first, a page at a time. Words and the filters that are names (status,
   * verdict, agent, model, tool, experiment, and a cost's order of magnitude) are read from the full-text
   * index's lists, which it intersects in order and stops at the page; times are a range of the runs' keys;
   * each row is then checked exactly. The total is counted to 200 past the page (`capped` beyond).
   *
   * @param query The words and filters, and the page.
   * @returns The page's runs and how many match (at most the page's end and 200 more).
   */
  search(query: SearchQuery): SearchResult {
    const words = query.q ? ftsQuery(query.q) : null;
    if (query.q && words === null) return { runs: [], total: 0, capped: false };
    const tags: string[] = [];
    const where: string[] = [];
    const params: (string | number)[] = [];
    const exact = (sql: string, ...values: (string | number)[]) => (where.push(sql), params.push(...values));
    if (query.status) (tags.push(tag("s", query.status)), exact("r.status = ?", query.status));
    if (query.verdict) (tags.push(tag("v", query.verdict)), exact("r.verdict = ?", query.verdict));
    if (query.agent) {
      tags.push(tag("a", query.agent));
      if (query.agent.includes("/")) exact("r.agent = ?", query.agent);
      else exact("r.agent LIKE ? ESCAPE '\\'", "%/" + query.agent.replace(/[\\%_]/g, "\\$&"));
    }
    if (query.model) (tags.push(tag("m", query.model)), exact("instr(r.models, ?) > 0", ` ${query.model} `));
    if (query.tool) (tags.push(tag("t", query.tool)), exact("instr(r.tools, ?) > 0", ` ${query.tool} `));
    if (query.experiment) {
      tags.push(tag("e", query.experiment.replace(/\?.*$/, "")));
      exact(
        "(r.experiment = ? OR r.experiment LIKE ? ESCAPE '\\')",
        query.experiment,
        query.experiment.replace(/[\\%_]/g, "\\$&") + "?%",
      );
    }
    if (query.minCost !== undefined) {
      const step = COST_STEPS.findLast((c) => c <= query.minCost!);
      if (step !== undefined) tags.push(tag("c", String(step)));
      exact("r.cost >= ?", query.minCost);
    }
    if (query.maxCost !== undefined) exact("r.cost <= ?", query.maxCost);
    // A time is a range of keys: of the full-text index's row IDs when it is read, so that it seeks to them.
    const key = words || tags.length ? "t.rowid" : "r.key";
    if (query.since) exact(`${key} >= ?`, runKey(`run-${compact(query.since)}-00000`));
    if (query.until) exact(`${key} < ?`, runKey(`run-${compact(untilTime(query.until))}-00000`));
    const match = [...(words ? [words] : []), ...tags.map((t) => `"${t}"`)].join(" AND ");
    const from = match
      ? "runs_text t JOIN runs r ON r.key = t.rowid WHERE runs_text MATCH ?" + (where.length ? " AND " : "")
      : "runs r" + (where.length ? " WHERE " : "");
    const all = [...(match ? [match] : []), ...params];
    const sql = from + where.join(" AND ");
    const order = match ? "t.rowid" : "r.key";
    const rows = this.#prepare(`SELECT r.* FROM ${sql} ORDER BY ${order} DESC LIMIT ? OFFSET ?`)
      .all(...all, query.limit, query.offset) as Record<string, unknown>[];
    if (query.offset === 0 && rows.length < query.limit) {
      return { runs: rows.map(rowOf), total: rows.length, capped: false };
    }
    const cap = query.offset + query.limit + COUNT_PAST;
    const n = Number(
      (this.#prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM ${sql} LIMIT ?)`).get(...all, cap) as {
        n: number;
      }).n,
    );
    return { runs: rows.map(rowOf), total: n, capped: n >= cap };
  }

  /** Closes the database. */
  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}

function rowOf(r: Record<string, unknown>): SearchRow {
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  const names = (v: unknown) => String(v ?? "").trim().split(" ").filter(Boolean);
  return {
    run_id: String(r.run_id),
    status: String(r.status) as RunRow["status"],
    started_at: text(r.started_at),
    ended_at: text(r.ended_at),
    duration_ms: n(r.duration_ms),
    agent: text(r.agent),
    agent_version: text(r.agent_version),
    model: text(r.model),
    tokens: n(r.tokens),
    cost: text(r.cost_text),
    experiment: text(r.experiment),
    last_seq: n(r.last_seq),
    digest: r.verdict === null ? null : {
      verdict: String(r.verdict) as RunDigest["verdict"],
      problems: Number(r.problems ?? 0),
      level: text(r.level) as RunDigest["level"],
      model_calls: Number(r.model_calls ?? 0),
      tool_calls: Number(r.tool_calls ?? 0),
      errors: Number(r.errors ?? 0),
      tokens: r.input_tokens === null
        ? null
        : { input: Number(r.input_tokens), output: Number(r.output_tokens) },
      cost: r.cost_text === null ? null : { amount: String(r.cost_text), currency: text(r.currency) },
      models: names(r.models),
      tools: names(r.tools),
    },
  };
}
