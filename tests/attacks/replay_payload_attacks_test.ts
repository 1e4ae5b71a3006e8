/**
 * `prove replay` (and `provr replay`, `resume`) serves a run's recorded answers to the agent loop from its
 * payloads: a record that verifies (resealed) may hold an answer nested 100,000 deep, or one of many small
 * values. The replay must be refused in one line that says the record cannot be served: an answer whose text part
 * nested so ran the loop out of stack (the replayed run failed with RangeError: Maximum call stack size exceeded).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Catalog } from "../../lib/provcat/catalog.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { replayRun } from "../../lib/provrun/replay/replay_run.ts";
import { RunFile } from "../../lib/provrun/run/run_file.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { putPayload, resealed } from "../provrun/replay/_runs.ts";
import { answerRunText } from "./_setup.ts";
import { recorded } from "../provrun/replay/_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("replay payload attacks");

Deno.test("a replay of a record whose answer nests 100,000 deep ends in one line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-replay-payload-" });
  const store = new FileStore({ runs: join(dir, "runs") });
  const catalog = await Catalog.open({ config: {} });
  try {
    const path = join(dir, "answer.yaml");
    await Deno.writeTextFile(path, answerRunText());
    const outcome = await runFile(await RunFile.load(path), { store, catalog });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const answer = (more: string) =>
      `{"content":[{"type":"text","text":"forty-two"}],"finish_reason":{"unified":"stop","raw":"stop"},` +
      `"usage":{"inputTokens":{"total":0},"outputTokens":{"total":0}},"response":{"id":"r","model":"m"}${more}}`;
    for (
      const [name, text] of [
        ["an answer with a field nested 100,000 deep", answer(`,"extra":${deep}`)],
        [
          "an answer whose text part nests 100,000 deep",
          answer(`,"content":[{"type":"text","text":${deep}}]`),
        ],
      ]
    ) {
      const forged = await resealed(store.runsRoot, outcome.runId, async (events, folder) => {
        const sha = await putPayload(folder, text!);
        for (const e of events) if (e.type === "model_called") e.data.response_payload = sha;
        return events;
      });
      const said = await replayRun(await store.readRun(forged), { store, catalog }).then(
        (r) => r.run.error ? `${r.run.error.name}: ${r.run.error.message}` : `served: ${r.run.status}`,
        (e) => `threw ${(e as Error).name}: ${(e as Error).message}`,
      );
      console.log(`${name}: ${said.slice(0, 300)}`);
      // refused before the loop is served anything, in one line that names the payload and why
      const ok = /^threw RunNotReplayable: .* is not JSON a reader takes \(nests .* deep\)$/.test(said);
      tally.add(name!, { stopped: ok, recorded: ok });
      assert.ok(ok, `${name}: ${said.slice(0, 500)}`);
    }
  } finally {
    await catalog.close();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
  console.log(tally.line());
});

Deno.test("a replay of a record whose tool result nests 100,000 deep ends in one line", async () => {
  await using r = await recorded();
  assert.equal(r.outcome.status, "completed", JSON.stringify(r.outcome.error));
  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  const forged = await resealed(r.runs, r.outcome.runId, async (events, folder) => {
    const sha = await putPayload(folder, `{"currency":"USD","rate":${deep}}`);
    for (const e of events) {
      if (e.type === "tool_called" && e.data.tool === "rate") e.data.result_payload = sha;
    }
    return events;
  });
  const said = await replayRun(await r.store.readRun(forged), { store: r.store, catalog: r.catalog }).then(
    (x) => x.run.error ? `${x.run.error.name}: ${x.run.error.message}` : `served: ${x.run.status}`,
    (e) => `threw ${(e as Error).name}: ${(e as Error).message}`,
  );
  console.log(`a tool result nested 100,000 deep: ${said.slice(0, 300)}`);
  const ok =
    /^threw RunNotReplayable: .*the result of tool call .* is not JSON a reader takes \(nests .* deep\)$/
      .test(said);
  tally.add("a tool result nested 100,000 deep", { stopped: ok, recorded: ok });
  assert.ok(ok, said.slice(0, 500));
  console.log(tally.line());
});
