import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../../cli/_io.ts";
import { prove } from "../../../cli/prove.ts";
import { Catalog } from "../../../lib/provcat/catalog.ts";
import { PriceTable } from "../../../lib/provevi/cost/price_table.ts";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { eventsOf } from "../_agent.ts";
import { gitCatalog } from "../_catalog.ts";

/** A price table of our own: the scripted model priced, so that its calls cost something. */
function ownTable(input: number): string {
  const table = JSON.parse(JSON.stringify(PriceTable.builtin().json));
  table.source = "our negotiated prices";
  table.models = [{
    provider: "test",
    model: "*",
    input,
    output: 10,
    cache_read: 0.5,
    cache_write: 2,
    reasoning: 10,
    source: "the contract",
    date: "2026-11-30",
  }];
  return JSON.stringify(table, null, 2);
}

const RUN = (priceTable: string, experiment = "") => `
run: { org: acme, domain: demo, env: dev, actor: ada, price_table: "${priceTable}" }
${experiment}
agent:
  name: priced
  backend: call
  model: "test:"
  script: { turns: [{ text: "Revenue grew 12%.", usage: { input: 1000, output: 100, cache_read: 400 } }] }
prompt: What was the growth?
`;

async function withExperimentCatalog<T>(
  t: Awaited<ReturnType<typeof gitCatalog>>,
  fn: (catalog: Catalog) => Promise<T>,
): Promise<T> {
  await using catalog = await Catalog.open({
    config: {
      cache: join(t.root, "cache2"),
      stores: { lake: { type: "git", path: t.repo } },
      routes: [
        { prefix: "data://acme/demo/dev", store: "lake" },
        { prefix: "experiment://acme/demo/dev", store: "lake" },
      ],
    },
  });
  return await fn(catalog);
}

Deno.test("run.price_table: the run's own table is read through the catalog, pinned, kept, and prices its calls; prove cost recomputes it", async () => {
  await using t = await gitCatalog({ "finance/prices.json": ownTable(2) });
  const outcome = await runFile(RunFile.parse(RUN("data://acme/demo/dev/finance/prices.json")), {
    catalog: t.catalog,
    runs: t.runs,
  });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events } = await eventsOf(t.runs, outcome.runId);
  const created = events[0]!.data;
  assert.match(
    String(created.price_table_source),
    /^data:\/\/acme\/demo\/dev\/finance\/prices\.json\?at=commit:[0-9a-f]{40}$/,
  );
  assert.equal(created.price_table_payload, PriceTable.parse(ownTable(2), "t").sha256);
  // 600 × 2 + 400 × 0.5 + 100 × 10 per million
  const call = events.find((e) => e.type === "model_called")!;
  assert.equal(call.data.cost, "0.0024");
  assert.equal((events.at(-1)!.data.cost as Record<string, unknown>).amount, "0.0024");
  assert.ok((await verifyRun(await findRun(outcome.folder))).ok);
  const io = bufferIo();
  assert.equal(await prove(["--runs", t.runs, "cost", outcome.runId, "--json"], io), 0);
  const cost = JSON.parse(io.stdout.join("\n"));
  assert.equal(cost.total, "0.0024");
  assert.equal(cost.table.source, created.price_table_source);
});

Deno.test("a run.price_table that is not a price table, or that the catalog cannot read, refuses the run before its folder exists", async () => {
  await using t = await gitCatalog({ "finance/prices.json": '{"version": 1, "models": "cheap"}' });
  for (
    const [uri, message] of [
      [
        "data://acme/demo/dev/finance/prices.json",
        /run\.price_table data:\/\/acme\/demo\/dev\/finance\/prices\.json: currency is not a text/,
      ],
      [
        "data://acme/demo/dev/finance/none.json",
        /run\.price_table data:\/\/acme\/demo\/dev\/finance\/none\.json cannot be read/,
      ],
    ] as const
  ) {
    await assert.rejects(
      () => runFile(RunFile.parse(RUN(uri)), { catalog: t.catalog, runs: t.runs }),
      message,
    );
  }
  await assert.rejects(() => Deno.stat(t.runs), Deno.errors.NotFound);
});

Deno.test("prove runs --experiment adds up the recorded costs of the runs shown, and prove cost --experiment recomputes them", async () => {
  await using t = await gitCatalog({ "finance/prices.json": ownTable(2) });
  const { writeExperiment } = await import("../../../lib/provevi/experiments/experiment.ts");
  await writeExperiment(t.catalog, "data://acme/demo/dev/experiments/q", {
    kind: "agent-eval",
    description: "What does the question cost?",
    inputs: [],
    metrics: ["cost"],
  }, "the experiment");
  await withExperimentCatalog(t, async (catalog) => {
    const file = RunFile.parse(
      RUN("data://acme/demo/dev/finance/prices.json", "experiment: experiment://acme/demo/dev/experiments/q"),
    );
    for (let i = 0; i < 2; i++) {
      const outcome = await runFile(file, { catalog, runs: t.runs });
      assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    }
  });
  const io = bufferIo();
  assert.equal(
    await prove(["--runs", t.runs, "runs", "--experiment", "experiment://acme/demo/dev/experiments/q"], io),
    0,
  );
  assert.equal(io.stdout.at(-1), "total cost of the 2 runs shown: 0.0048 (2 of them recorded a cost)");
  const json = bufferIo();
  assert.equal(
    await prove([
      "--runs",
      t.runs,
      "cost",
      "--experiment",
      "experiment://acme/demo/dev/experiments/q",
      "--json",
    ], json),
    0,
  );
  const cost = JSON.parse(json.stdout.join("\n"));
  assert.equal(cost.total, "0.0048");
  assert.equal(cost.runs.length, 2);
});
