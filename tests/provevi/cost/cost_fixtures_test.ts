/**
 * The cost fixtures: model calls of four providers (OpenAI, Anthropic, Gemini, an OpenAI-compatible server), each
 * with its usage as its API reports it, cache and reasoning tokens included, and its cost computed by hand. A run
 * records them (through the run's core and its cost part, as any run does), and `prove cost` recomputes each
 * call and the total from the evidence alone: no figure may differ from the hand-computed one.
 * @module
 */
import assert from "node:assert/strict";
import { bufferIo } from "../../../cli/_io.ts";
import { prove } from "../../../cli/prove.ts";
import type { Json } from "../../../lib/provevi/evidence/event.ts";
import { PriceTable } from "../../../lib/provevi/cost/price_table.ts";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { usageFrom, type UsageShape } from "../../../lib/provevi/cost/call_cost.ts";
import { dataCost } from "../../../lib/provevi/cost/run_cost.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { type BackendJob, InProcessBackend } from "../../../lib/provrun/backends/backend.ts";

const FIXTURE = JSON.parse(
  await Deno.readTextFile(new URL("../../../fixtures/cost/usage_shapes.json", import.meta.url)),
) as {
  calls: {
    name: string;
    provider: string;
    model: string;
    shape: UsageShape;
    usage: Json;
    tokens: { input: number; cacheRead: number; cacheWrite: number; output: number; reasoning: number };
    cost: string | null;
  }[];
  total: string;
};

/** A backend whose model calls are the fixture's: each a `model_called` with the usage made one shape. */
class FixtureCalls extends InProcessBackend {
  readonly name = "fixture";
  constructor(readonly lie: { index: number; cost: string } | null = null) {
    super();
  }
  protected async work(job: BackendJob): Promise<string> {
    const table = PriceTable.builtin();
    for (const [i, call] of FIXTURE.calls.entries()) {
      const u = usageFrom(call.shape, call.usage);
      const data: { [key: string]: Json } = {
        provider: call.provider,
        model: call.model,
        streamed: false,
        input_tokens: u.input,
        output_tokens: u.output,
        cache_read_tokens: u.cacheRead,
        cache_write_tokens: u.cacheWrite,
        reasoning_tokens: u.reasoning,
      };
      data.cost = this.lie?.index === i ? this.lie.cost : dataCost(data, table);
      const step = job.ctx.recorder.startStep({ component: "FixtureCalls", spanName: `chat ${call.model}` });
      await step.end("model_called", { payload: await job.ctx.recorder.payload(call.usage), data });
    }
    return "done";
  }
}

const RUN = `
run: { org: acme, domain: demo, env: dev, actor: ada }
agent: { name: priced, backend: call, model: "test:", script: { turns: [{ text: unused }] } }
prompt: the calls of the fixture
`;

async function fixtureRun(runs: string, backend: FixtureCalls) {
  return await runFile(RunFile.parse(RUN), { runs, backend, env: () => undefined });
}

async function proveCost(
  runs: string,
  runId: string,
): Promise<{ code: number; json: Record<string, unknown> }> {
  const io = bufferIo();
  const code = await prove(["--runs", runs, "cost", runId, "--json"], io);
  return { code, json: JSON.parse(io.stdout.join("\n")) };
}

Deno.test("each provider's usage is made one shape, as the fixture's hand count says", () => {
  for (const call of FIXTURE.calls) {
    assert.deepEqual(usageFrom(call.shape, call.usage), call.tokens, call.name);
  }
});

Deno.test("prove cost recomputes every call of four providers' usage shapes and the total with 0 discrepancies from the hand-computed figures", async () => {
  const runs = await Deno.makeTempDir({ prefix: "cost-fixtures-" });
  try {
    const outcome = await fixtureRun(runs, new FixtureCalls());
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    const { code, json } = await proveCost(runs, outcome.runId);
    assert.equal(code, 0);
    const calls = json.calls as { model: string; cost: string | null; recorded?: string | null }[];
    const discrepancies: string[] = [];
    FIXTURE.calls.forEach((expected, i) => {
      const got = calls[i]!;
      if (got.cost !== expected.cost) {
        discrepancies.push(`${expected.name}: prove cost ${got.cost}, by hand ${expected.cost}`);
      }
      if (got.recorded !== expected.cost) discrepancies.push(`${expected.name}: recorded ${got.recorded}`);
    });
    if (json.total !== FIXTURE.total) {
      discrepancies.push(`total: prove cost ${json.total}, by hand ${FIXTURE.total}`);
    }
    console.log(`cost fixtures: ${FIXTURE.calls.length} calls, ${discrepancies.length} discrepancies`);
    assert.deepEqual(discrepancies, []);
    assert.equal(json.unpriced, 1);
    assert.deepEqual(json.problems, []);
    assert.equal((json.recorded as Record<string, Json>).amount, FIXTURE.total);
    const check = await verifyRun(await findRun(outcome.folder));
    assert.ok(check.ok, JSON.stringify(check.problems));
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("a run that records a call's cost other than its usage priced by its pinned table does not verify (cost.call_differs)", async () => {
  const runs = await Deno.makeTempDir({ prefix: "cost-fixtures-" });
  try {
    const outcome = await fixtureRun(runs, new FixtureCalls({ index: 2, cost: "0.0128" }));
    const check = await verifyRun(await findRun(outcome.folder));
    assert.deepEqual(check.problems.map((p) => p.code), ["cost.call_differs"]);
    const { code, json } = await proveCost(runs, outcome.runId);
    assert.equal(code, 1);
    assert.equal(check.problems[0]!.seq, (json.calls as { seq: number }[])[2]!.seq);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("a run whose recorded total is not the sum of its calls does not verify (cost.total_differs)", async () => {
  const runs = await Deno.makeTempDir({ prefix: "cost-fixtures-" });
  try {
    const liar = { name: "liar", endFacts: () => ({ cost: { amount: "0.01", currency: "USD" } }) };
    const outcome = await runFile(RunFile.parse(RUN), {
      runs,
      backend: new FixtureCalls(),
      env: () => undefined,
      parts: [liar],
    });
    const check = await verifyRun(await findRun(outcome.folder));
    assert.deepEqual(check.problems.map((p) => p.code), ["cost.total_differs"]);
    assert.match(check.problems[0]!.message, /amount "0\.01".*amount "0\.204478"/);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});
