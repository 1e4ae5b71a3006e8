/**
 * The runs page's API: a page of runs (`listRuns`, as `prove runs`; or the search index, for free text and the
 * filters `listRuns` does not have), cut to the policy's level with the columns it hides named; and the digests
 * of the runs on a page (verdict, calls, errors, tokens, cost), each checked or kept while it is unchanged.
 * @module
 */
import { checkRunIdToRead } from "../evidence/record.ts";
import { listRuns, type ListRunsOptions, RUN_LIST_STATUSES } from "../runs/list_runs.ts";
import { type RouteContext, wholeNumber } from "./route_context.ts";
import type { RunDigest } from "./run_digest.ts";
import { addDecimal } from "./run_calls.ts";
import { needsSearch, type RunsAnswer } from "./run_search.ts";
import type { SearchQuery } from "./search_index.ts";
import { json, ViewerRefusal } from "./viewer_http.ts";
import { hiddenAt, rowAtLevel } from "./row_level.ts";

/** The verdicts a search may ask for. */
const VERDICTS = ["verified", "does_not_verify", "cannot_check", "running"];

function money(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null || value === "") return undefined;
  if (!/^\d{1,12}(\.\d{1,12})?$/.test(value)) {
    throw new ViewerRefusal(
      400,
      `${name}=${value.slice(0, 40)} is not an amount: give a number such as 0.25`,
    );
  }
  return Number(value);
}

function dateOf(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name);
  if (value === null || value === "") return undefined;
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new ViewerRefusal(400, `${name}=${value.slice(0, 40)} is not a date: give one such as 2026-11-30`);
  }
  return value;
}

/** The search of a runs page's query. */
function searchQuery(q: URLSearchParams, page: { limit: number; offset: number }): SearchQuery {
  const verdict = q.get("verdict");
  if (verdict && !VERDICTS.includes(verdict)) {
    throw new ViewerRefusal(
      400,
      `"${verdict.slice(0, 40)}" is not a verdict: use one of ${VERDICTS.join(", ")}`,
    );
  }
  const text = (name: string) => {
    const value = q.get(name);
    if (value !== null && value.length > 500) {
      throw new ViewerRefusal(400, `${name} is longer than 500 characters`);
    }
    return value || undefined;
  };
  const query: SearchQuery = { ...page };
  for (
    const [key, name] of [["q", "q"], ["status", "status"], ["agent", "agent"], ["model", "model"], [
      "tool",
      "tool",
    ], ["experiment", "experiment"]] as const
  ) {
    const value = text(name);
    if (value !== undefined) query[key] = value;
  }
  if (verdict) query.verdict = verdict;
  const since = dateOf(q, "since"), until = dateOf(q, "until");
  const minCost = money(q, "min_cost"), maxCost = money(q, "max_cost");
  return {
    ...query,
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    ...(minCost !== undefined ? { minCost } : {}),
    ...(maxCost !== undefined ? { maxCost } : {}),
  };
}

/** A page of runs: from `listRuns`, or from the search index when the query needs it. */
export async function runsPage(c: RouteContext): Promise<Response> {
  const q = c.query;
  const limit = Math.min(wholeNumber(q, "limit", { max: 500 }) ?? 50, 500);
  const offset = wholeNumber(q, "offset") ?? 0;
  const status = q.get("status");
  if (status && !(RUN_LIST_STATUSES as readonly string[]).includes(status)) {
    throw new ViewerRefusal(
      400,
      `"${status.slice(0, 40)}" is not a run status: use one of ${RUN_LIST_STATUSES.join(", ")}`,
    );
  }
  const level = c.options.policy.liveLevel();
  const hidden = hiddenAt(level);
  if (needsSearch(q)) {
    const found = await c.search.search(searchQuery(q, { limit, offset }));
    const answer: RunsAnswer = { ...found, limit, offset, hidden };
    return json(answer);
  }
  const options: ListRunsOptions = {
    limit,
    offset,
    ...(status ? { status: status as ListRunsOptions["status"] & string } : {}),
    ...(q.get("agent") ? { agent: q.get("agent")! } : {}),
    ...(q.get("experiment") ? { experiment: q.get("experiment")! } : {}),
    ...(q.get("since") ? { since: q.get("since")! } : {}),
  };
  const list = await listRuns(c.store, options);
  const answer: RunsAnswer = {
    ...list,
    runs: list.runs.map((r) => rowAtLevel(r, level)),
    limit,
    offset,
    hidden,
    search: null,
  };
  return json(answer);
}

/** The most runs one request for digests names: a page of the runs page asks a few at a time. */
const MAX_DIGESTS = 50;

/** A digest as the runs page gets it: all but the text a search reads. */
export type ListDigest = Omit<RunDigest, "text"> | { run_id: string; error: string };

/** The digests of the runs named by `run=…` (each checked, or from the cache while unchanged). */
export async function runDigests(c: RouteContext): Promise<Response> {
  const ids = [...new Set(c.query.getAll("run"))];
  if (ids.length > MAX_DIGESTS) {
    throw new ViewerRefusal(400, `ask for at most ${MAX_DIGESTS} runs' digests at once, not ${ids.length}`);
  }
  for (const id of ids) checkRunIdToRead(id);
  const out: ListDigest[] = await Promise.all(ids.map(async (id) => {
    try {
      const { text: _text, ...digest } = await c.digests.digest(id);
      return digest;
    } catch (error) {
      return { run_id: id, error: (error as Error).message.split("\n")[0]!.slice(0, 300) };
    }
  }));
  return json(out);
}

/** The totals of a group of runs: how many, and their tokens and recorded cost where the level shows them. */
export interface RunTotals {
  /** The group: an agent version, or an experiment's pinned version. */
  key: string;
  runs: number;
  failed: number;
  tokens: number | null;
  /** The sum of the costs the runs recorded (a decimal text), or null when none did. */
  cost: string | null;
}

/** The most runs a totals request reads: an agent or experiment with more is summed over its newest. */
const MAX_TOTALS_RUNS = 20_000;

/**
 * The totals of an agent's runs by version (`agent=…`), or of an experiment's runs by pinned version
 * (`experiment=…`): from `listRuns`, as the runs page lists them.
 */
export async function runTotals(c: RouteContext): Promise<Response> {
  const agent = c.query.get("agent") ?? "";
  const experiment = c.query.get("experiment") ?? "";
  if ((agent === "") === (experiment === "")) {
    throw new ViewerRefusal(400, "give either agent=NAME or experiment=URI for the totals");
  }
  const level = c.options.policy.liveLevel();
  if (level === null) return json({ hidden: true, groups: [] });
  const list = await listRuns(c.store, {
    ...(agent ? { agent } : { experiment }),
    limit: MAX_TOTALS_RUNS,
  });
  const usage = level === "usage" || level === "bodies";
  const groups = new Map<string, RunTotals>();
  for (const row of list.runs as (typeof list.runs[number] & { cost?: string | null })[]) {
    const key = (agent ? row.agent_version : row.experiment) ?? "(none)";
    const g = groups.get(key) ?? { key, runs: 0, failed: 0, tokens: null, cost: null };
    g.runs++;
    if (row.status === "failed") g.failed++;
    if (usage && row.tokens !== null) g.tokens = (g.tokens ?? 0) + row.tokens;
    if (usage && typeof row.cost === "string" && /^\d+(\.\d+)?$/.test(row.cost)) {
      g.cost = addDecimal(g.cost ?? "0", row.cost);
    }
    groups.set(key, g);
  }
  return json({ hidden: !usage, total: list.total, read: list.runs.length, groups: [...groups.values()] });
}
