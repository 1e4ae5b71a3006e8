import assert from "node:assert/strict";
import type { RunRow } from "../../../lib/provevi/runs/list_runs.ts";
import type { RunDigest } from "../../../lib/provevi/viewer/run_digest.ts";
import { ftsQuery, runKey, SearchIndex } from "../../../lib/provevi/viewer/search_index.ts";

function row(id: string, more: Partial<RunRow> = {}): RunRow {
  return {
    run_id: id,
    status: "completed",
    started_at: `${id.slice(4, 8)}-${id.slice(8, 10)}-${id.slice(10, 12)}T12:00:00.000000Z`,
    ended_at: null,
    duration_ms: 10,
    agent: "acme/finance/dev/analyst",
    agent_version: "v1",
    model: "anthropic:claude-sonnet-4-5",
    tokens: 100,
    experiment: null,
    last_seq: 9,
    ...more,
  };
}

function digest(id: string, text: string, more: Partial<RunDigest> = {}): RunDigest {
  return {
    run_id: id,
    verdict: "verified",
    problems: 0,
    level: "bodies",
    model_calls: 2,
    tool_calls: 1,
    errors: 0,
    tokens: { input: 80, output: 20 },
    cost: null,
    models: ["claude-sonnet-4-5"],
    tools: ["read_file"],
    text,
    ...more,
  };
}

const ID = (day: number, suffix: string) => `run-202611${String(day).padStart(2, "0")}T120000Z-${suffix}`;

Deno.test("runKey() orders runs newest first, by their IDs' time and then their suffix", () => {
  const ids = [ID(1, "00000001"), ID(1, "00000002"), ID(2, "00000000"), ID(30, "ffffffff")];
  const keys = ids.map(runKey);
  assert.deepEqual([...keys].sort((a, b) => a - b), keys);
  assert.ok(keys.every(Number.isSafeInteger));
});

Deno.test("ftsQuery() makes any text a query of quoted words, so FTS5's syntax in a search is only text", () => {
  assert.equal(ftsQuery("revenue grew"), '"revenue" AND "grew"');
  assert.equal(ftsQuery("rev* read_file"), '"rev" AND "read_file"');
  assert.equal(
    ftsQuery('x" OR NEAR(a b) * tags:y'),
    '"x" AND "OR" AND "NEAR" AND "a" AND "b" AND "tags" AND "y"',
  );
  assert.equal(ftsQuery("  ;:!  "), null);
  assert.equal(ftsQuery("Umsatz wächst"), '"Umsatz" AND "wächst"');
});

Deno.test("SearchIndex finds runs by their words and filters, newest first, a page at a time", () => {
  const index = new SearchIndex(":memory:");
  try {
    index.put(
      row(ID(1, "00000001")),
      digest(ID(1, "00000001"), "What was the revenue growth? Revenue grew 12%"),
    );
    index.put(
      row(ID(2, "00000002"), { status: "failed" }),
      digest(ID(2, "00000002"), "revenue question failed", { errors: 2, tools: [] }),
    );
    index.put(
      row(ID(3, "00000003"), { agent: "acme/ops/dev/triage" }),
      digest(ID(3, "00000003"), "triage the incident queue", { tools: ["write_file", "read_file"] }),
    );
    index.put(
      row(ID(4, "00000004")),
      digest(ID(4, "00000004"), "revenue", {
        verdict: "does_not_verify",
        cost: { amount: "0.42", currency: "USD" },
      }),
    );
    const ids = (query: Partial<Parameters<SearchIndex["search"]>[0]>) =>
      index.search({ limit: 10, offset: 0, ...query }).runs.map((r) => r.run_id.slice(-1));
    assert.deepEqual(ids({ q: "revenue" }), ["4", "2", "1"]);
    assert.deepEqual(ids({ q: "Revenue GREW" }), ["1"], "all words must match, in any case");
    assert.deepEqual(ids({ q: "rev" }), [], "a word is whole");
    assert.deepEqual(ids({ q: "s_failed" }), [], "the filters' tags are not the text");
    assert.deepEqual(ids({ q: "revenue", status: "failed" }), ["2"]);
    assert.deepEqual(ids({ verdict: "does_not_verify" }), ["4"]);
    assert.deepEqual(ids({ tool: "write_file" }), ["3"]);
    assert.deepEqual(ids({ tool: "read" }), [], "a tool is matched by its whole name");
    assert.deepEqual(ids({ agent: "triage" }), ["3"]);
    assert.deepEqual(ids({ agent: "%" }), [], "a bare name's LIKE wildcards are text");
    assert.deepEqual(ids({ minCost: 0.4 }), ["4"]);
    assert.deepEqual(ids({ since: "2026-11-02", until: "2026-11-03" }), ["3", "2"]);
    const page = index.search({ q: "revenue", limit: 2, offset: 0 });
    assert.deepEqual([page.runs.length, page.total, page.capped], [2, 3, false]);
    assert.deepEqual(ids({ q: "revenue", verdict: "verified", tool: "read_file" }), ["1"]);
    assert.equal(index.search({ q: "revenue", limit: 2, offset: 2 }).runs[0]!.run_id, ID(1, "00000001"));
    // A run indexed again (it ended, or changed) replaces its row and its words.
    index.put(row(ID(1, "00000001")), digest(ID(1, "00000001"), "nothing of the kind"));
    assert.deepEqual(ids({ q: "growth" }), []);
    assert.equal(index.count(), 4);
    const found = index.search({ q: "nothing", limit: 1, offset: 0 }).runs[0]!;
    assert.equal(found.digest?.verdict, "verified");
    assert.deepEqual(found.digest?.tools, ["read_file"]);
  } finally {
    index.close();
  }
});
