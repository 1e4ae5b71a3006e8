/**
 * The runs page's search at 100,000 runs, for `viewer_bench.ts`: the viewer's search index holds 100,000 runs
 * (each with its row, its digest and a text of a few hundred characters of prompt, answer and tool arguments),
 * and each search goes through the whole handler (guard, the query's checks, the index, the JSON); the reference
 * is the same SQL through `node:sqlite` directly on the same file, in the same run. Target: under 50 ms (the ratio
 * shows the handler's own share, a few milliseconds, which weighs most where the SQL takes one).
 * @module
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/policy.ts";
import { RunSearch } from "../../lib/provevi/viewer/run_search.ts";
import { SearchIndex } from "../../lib/provevi/viewer/search_index.ts";
import { viewerHandler } from "../../lib/provevi/viewer/viewer_server.ts";
import { median, report } from "./_report.ts";

const RUNS = 100_000;
const PORT = 5000;
const TOKEN = "d".repeat(64);
const WORDS = [
  "revenue",
  "margin",
  "churn",
  "north",
  "south",
  "renewals",
  "forecast",
  "ledger",
  "invoice",
  "audit",
];
const TOOLS = ["read_file", "grep_file", "write_file", "list_files", "note"];

function runId(r: number): string {
  const day = new Date(Date.UTC(2026, 0, 1) + r * 300_000).toISOString().replace(/[-:]/g, "").slice(0, 15);
  return `run-${day}Z-${(r * 2654435761 % 2 ** 32).toString(16).padStart(8, "0")}`;
}

/** Fills an index with 100,000 runs whose words, tools, verdicts and costs vary. */
export function fill(index: SearchIndex): void {
  index.db.exec("BEGIN");
  for (let r = 0; r < RUNS; r++) {
    const id = runId(r);
    const words = Array.from({ length: 40 }, (_, i) => WORDS[(r * 7 + i * 3) % WORDS.length]).join(" ");
    const tools = [TOOLS[r % 5]!, TOOLS[(r * 3) % 5]!];
    index.put({
      run_id: id,
      status: r % 10 === 0 ? "failed" : "completed",
      started_at: id.slice(4, 8) + "-" + id.slice(8, 10) + "-" + id.slice(10, 12) + "T00:00:00Z",
      ended_at: null,
      duration_ms: 1000,
      agent: `acme/demo/dev/agent-${r % 1000}`,
      agent_version: "f".repeat(64),
      model: "anthropic:claude-sonnet-4-5",
      tokens: 120,
      experiment: null,
      last_seq: 20,
    }, {
      run_id: id,
      verdict: r % 100 === 0 ? "does_not_verify" : "verified",
      problems: r % 100 === 0 ? 1 : 0,
      level: "bodies",
      model_calls: 3,
      tool_calls: 2,
      errors: r % 10 === 0 ? 1 : 0,
      tokens: { input: 100, output: 20 },
      cost: { amount: (r % 1000 / 1000).toFixed(3), currency: "USD" },
      models: ["claude-sonnet-4-5"],
      tools,
      text: `${id} What was the ${words} question ${r}? Revenue grew ${r % 30}% in the ${
        WORDS[r % 10]
      } region.`,
    });
  }
  index.db.exec("COMMIT");
}

/** The search's SQL written out (as `SearchIndex.search` makes it), through node:sqlite alone on the same file. */
function bare(
  db: DatabaseSync,
  query: { match: string | null; where: readonly string[]; params: readonly (string | number)[] },
) {
  const from = query.match
    ? "runs_text t JOIN runs r ON r.key = t.rowid WHERE runs_text MATCH ?" +
      (query.where.length ? " AND " : "")
    : "runs r" + (query.where.length ? " WHERE " : "");
  const sql = from + query.where.join(" AND ");
  const all = [...(query.match ? [query.match] : []), ...query.params];
  const rows = db.prepare(
    `SELECT r.* FROM ${sql} ORDER BY ${query.match ? "t.rowid" : "r.key"} DESC LIMIT 50 OFFSET 0`,
  )
    .all(...all);
  if (rows.length === 50) {
    db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM ${sql} LIMIT 250)`).get(...all);
  }
  return rows;
}

/** Runs the search benchmark and prints its lines. */
export async function searchBench(dir: string): Promise<void> {
  const path = join(dir, "search.db");
  const index = new SearchIndex(path);
  const started = performance.now();
  fill(index);
  // As a viewer's index is between its passes: written, and folded into its file.
  index.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  console.log(
    `search index of ${RUNS.toLocaleString("en-US")} runs built in ${
      Math.round(performance.now() - started)
    } ms`,
  );
  const runs = join(dir, "no-runs");
  await Deno.mkdir(runs, { recursive: true });
  const store = new FileStore({ runs });
  const policy = TelemetryPolicy.parse(
    "version: 1\ndestinations:\n  browser:\n    kind: live\n    receives: bodies\n",
  );
  const search = new RunSearch(store, { policy, index });
  const handle = viewerHandler(store, { policy, port: PORT, token: TOKEN, search });
  const raw = new DatabaseSync(path, { readOnly: true });
  const cases = [
    ["one word that every run holds", "q=revenue", { match: '"revenue"', where: [], params: [] }],
    ["two words, a tool and a status", "q=north+ledger&tool=read_file&status=failed", {
      match: '"north" AND "ledger" AND "§s_failed" AND "§t_read_file"',
      where: ["r.status = ?", "instr(r.tools, ?) > 0"],
      params: ["failed", " read_file "],
    }],
    ["a rare verdict", "verdict=does_not_verify", {
      match: '"§v_does_not_verify"',
      where: ["r.verdict = ?"],
      params: ["does_not_verify"],
    }],
    ["a cost and a tool, no words", "min_cost=0.9&tool=grep_file", {
      match: '"§t_grep_file" AND "§c_0_5"',
      where: ["instr(r.tools, ?) > 0", "r.cost >= ?"],
      params: [" grep_file ", 0.9],
    }],
  ] as const;
  for (const [name, qs, query] of cases) {
    const viewer: number[] = [];
    const direct: number[] = [];
    for (let i = -5; i < 31; i++) {
      let t = performance.now();
      const r = await handle(
        new Request(`http://127.0.0.1:${PORT}/t/${TOKEN}/api/runs?limit=50&${qs}`, {
          headers: { host: `127.0.0.1:${PORT}` },
        }),
      );
      const body = await r.text();
      if (i >= 0) viewer.push(performance.now() - t);
      if (r.status !== 200 || body.length < 200) {
        throw new Error(`the search "${name}" failed: ${body.slice(0, 200)}`);
      }
      t = performance.now();
      bare(raw, query);
      if (i >= 0) direct.push(performance.now() - t);
    }
    report(
      `runs page search through the whole handler, ${name}, 100,000 runs (vs the bare SQL on node:sqlite)`,
      median(viewer),
      median(direct),
      "ms",
      "under 50 ms; the handler's own share is a few ms: the request, the JSON of 50 rows",
    );
  }
  raw.close();
  await search.close();
  index.close();
}

if (import.meta.main) {
  const dir = await Deno.makeTempDir({ prefix: "bench-search-" });
  try {
    await searchBench(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
