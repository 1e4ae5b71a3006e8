import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";
import { exportTrace } from "../../../lib/provtrace/export/export.ts";
import type { TokenTurn } from "../../../lib/provtrace/export/tokens.ts";
import { bufferIo } from "../../../cli/_io.ts";
import { provtrace } from "../../../cli/provtrace.ts";
import { startFakeVllm } from "../../../fixtures/providers/fake_vllm_server.ts";

function agentRun(baseUrl: string, model: string, stream: boolean, tokenIds = true): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: rl-agent
  backend: agent
  model: "openai-compatible:${model}"
  provider: { base_url: "${baseUrl}", token_ids: ${tokenIds} }
  tools: [list_files]
  stream: ${stream}
prompt: What is in /input?
`);
}

async function payload(runs: string, runId: string, sha: string): Promise<unknown> {
  const record = await new FileStore({ runs }).readRun(runId);
  return JSON.parse(new TextDecoder().decode(await record.payload(sha)));
}

for (const stream of [false, true]) {
  Deno.test(`a vLLM-style server's token IDs and log-probabilities are recorded with each call, and exported per turn (${stream ? "SSE" : "JSON"})`, async () => {
    await using server = startFakeVllm();
    const runs = await Deno.makeTempDir();
    try {
      const outcome = await runFile(agentRun(server.baseUrl, "vllm-agent", stream), { runs });
      assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
      // The request asked for them, and each model_called holds them as the server gave them.
      for (const body of server.bodies) {
        const sent = JSON.parse(body);
        assert.equal(sent.return_token_ids, true);
        assert.equal(sent.logprobs, true);
      }
      const record = await new FileStore({ runs }).readRun(outcome.runId);
      const calls = readEventsText((await record.eventsText())!).events.filter((e) =>
        e.type === "model_called"
      );
      assert.equal(calls.length, 2);
      for (const [i, call] of calls.entries()) {
        const tokens = await payload(runs, outcome.runId, call.data.tokens_payload as string) as Record<
          string,
          unknown
        >;
        assert.deepEqual(tokens.prompt_token_ids, server.tokens[i]!.prompt);
        assert.deepEqual(tokens.completion_token_ids, server.tokens[i]!.completion);
        assert.deepEqual(tokens.logprobs, server.tokens[i]!.logprobs);
      }
      // The trace database keeps them, and the steps export gives each turn with its loss mask.
      const db = join(runs, "trace.db");
      assert.deepEqual((await buildTrace({ store: "file", runs, db })).refused, []);
      const exported = await exportTrace(db, { kind: "steps", tokens: true, runs });
      assert.deepEqual(exported.breaks, []);
      const turns = exported.lines.map((l) => l.tokens as TokenTurn);
      assert.deepEqual(turns.map((t) => t.prefix), [null, true]);
      const [first, second] = [server.tokens[0]!, server.tokens[1]!];
      assert.deepEqual(turns[1]!.prompt_token_ids, second.prompt);
      assert.deepEqual(turns[1]!.completion_token_ids, second.completion);
      assert.deepEqual(turns[1]!.logprobs, second.logprobs);
      // 1 on what the model produced (the first reply, inside the second prompt, and the second reply), 0 on
      // the system, user and tool tokens.
      const expected = [
        ...new Array(first.prompt.length).fill(0),
        ...new Array(first.completion.length).fill(1),
        ...new Array(second.prompt.length - first.prompt.length - first.completion.length).fill(0),
        ...new Array(second.completion.length).fill(1),
      ];
      assert.deepEqual(turns[1]!.loss_mask, expected);
      assert.deepEqual(turns[0]!.loss_mask, [
        ...new Array(first.prompt.length).fill(0),
        ...new Array(first.completion.length).fill(1),
      ]);
      // ATIF carries them in each agent step's metrics.
      const atif = (await exportTrace(db, { kind: "atif", runs })).lines[0]!;
      const steps = atif.steps as { source: string; metrics?: { completion_token_ids?: number[] } }[];
      assert.deepEqual(
        steps.filter((s) => s.source === "agent").map((s) => s.metrics?.completion_token_ids),
        [first.completion, second.completion],
      );
    } finally {
      await Deno.remove(runs, { recursive: true });
    }
  });
}

Deno.test("the prefix check names every run whose turn's prompt does not start with the turn before it", async () => {
  await using server = startFakeVllm();
  const runs = await Deno.makeTempDir();
  try {
    const good = await runFile(agentRun(server.baseUrl, "vllm-agent", false), { runs });
    const drift = await runFile(agentRun(server.baseUrl, "vllm-drift", true), { runs });
    const plain = await runFile(agentRun(server.baseUrl, "vllm-agent", false, false), { runs });
    for (const o of [good, drift, plain]) assert.equal(o.status, "completed", JSON.stringify(o.error));
    const db = join(runs, "trace.db");
    assert.deepEqual((await buildTrace({ store: "file", runs, db })).refused, []);
    const exported = await exportTrace(db, { kind: "steps", tokens: true, runs });
    assert.deepEqual(exported.breaks.map((b) => b.run_id), [drift.runId]);
    const broken = exported.breaks[0]!;
    assert.match(
      broken.problem,
      /does not start with the prompt and completion of the one at seq \d+: token \d+ differs/,
    );
    const driftTurns = exported.lines.filter((l) => l.run_id === drift.runId).map((l) =>
      l.tokens as TokenTurn
    );
    assert.deepEqual(driftTurns.map((t) => t.prefix), [null, false]);
    // A broken turn's mask marks its own completion alone.
    const second = driftTurns[1]!;
    assert.equal(second.loss_mask.indexOf(1), second.prompt_token_ids.length);
    // A run that did not ask for tokens has none, and breaks nothing.
    assert.ok(exported.lines.filter((l) => l.run_id === plain.runId).every((l) => !("tokens" in l)));
    const io = bufferIo();
    assert.equal(
      await provtrace(["export", "--db", db, "--runs", runs, "--format", "steps", "--tokens"], io),
      0,
    );
    assert.equal(io.stderr.length, 1);
    assert.match(io.stderr[0]!, new RegExp(`^provtrace: prefix broken: run ${drift.runId}: the prompt of`));
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});
