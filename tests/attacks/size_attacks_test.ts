/**
 * Sizes: a tool result past its limit is refused and recorded and the run goes on (provr does not run out of
 * memory); an output past its limit fails the run, sealed, with the outputs recorded.
 * @module
 */
import assert from "node:assert/strict";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { RunFile } from "../../lib/provrun/run/run_file.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { agentFile, eventsOf } from "../provrun/_agent.ts";
import { gitCatalog } from "../provrun/_catalog.ts";
import { Tally } from "./_tally.ts";
import { startFlood } from "../../fixtures/attacks/flood_provider.ts";
import { isolateBytes } from "../_memory.ts";

const tally = new Tally("size attacks");
const TOOLS = new URL("../../fixtures/attacks/tools", import.meta.url).pathname;

Deno.test("a 64 MB tool result past the default limit is refused and recorded, and the run completes", async () => {
  await using t = await gitCatalog({ "x.txt": "x" });
  const turns = `      - tool_calls: [{ id: h1, name: huge_result }]
      - tool_calls: [{ id: w1, name: write_file, args: { path: /output/answer.txt, content: "ok" } }]
      - text: "done"`;
  const outcome = await runFile(agentFile(turns, { extra: `  tools_folder: ${TOOLS}` }), { runs: t.runs });
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  const call = events.find((e) => e.type === "tool_called" && e.data.tool === "huge_result");
  const refused = /ResultTooLarge|SandboxExited/.test(String(call?.data.error));
  tally.add("a 64 MB tool result", { stopped: refused && outcome.status === "completed", recorded: !!call });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  assert.ok(refused, String(call?.data.error));
  assert.deepEqual((await verifyRun(record)).problems.map((p) => p.message), []);
});

Deno.test("an output past agent.limits.output_bytes, or outputs past outputs_bytes, fail the run sealed", async () => {
  await using t = await gitCatalog({ "x.txt": "x" });
  const big = "x".repeat(4096);
  for (
    const [name, limits] of [
      ["one output past output_bytes", "{ output_bytes: 1000 }"],
      ["outputs past outputs_bytes", "{ outputs_bytes: 6000 }"],
    ] as const
  ) {
    const turns =
      `      - tool_calls: [{ id: w1, name: write_file, args: { path: /output/a.txt, content: "${big}" } }]
      - tool_calls: [{ id: w2, name: write_file, args: { path: /output/b.txt, content: "${big}" } }]
      - text: "done"`;
    const outcome = await runFile(agentFile(turns, { extra: `  limits: ${limits}` }), { runs: t.runs });
    const { events, record } = await eventsOf(t.runs, outcome.runId);
    const last = events.at(-1)!;
    const recorded = last.type === "run_failed" && last.data.error === "OutputTooLarge" &&
      ["a.txt", "b.txt"].every((p) =>
        events.some((e) => e.type === "output_artifact_created" && e.data.path === p)
      );
    tally.add(name, { stopped: outcome.status === "failed", recorded });
    assert.ok(recorded, JSON.stringify(last.data));
    assert.deepEqual((await verifyRun(record)).problems.map((p) => p.message), []);
  }
});

Deno.test("a model that answers with 300 MB (streamed text, or one tool call's arguments) is cut at agent.limits.model_bytes while it arrives, and the run fails sealed", async () => {
  await using t = await gitCatalog({ "x.txt": "x" });
  for (
    const [name, model, stream, limits] of [
      ["300 MB of streamed text, default limit", "text", true, ""],
      ["300 MB of a tool call's arguments, model_bytes: 1 MB", "args", false, "model_bytes: 1048576"],
      ["300 MB of streamed text, model_bytes: 1 MB", "text", true, "model_bytes: 1048576"],
    ] as const
  ) {
    await using flood = startFlood();
    const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: analyst
  backend: agent
  model: "openai-compatible:${model}"
  provider: { base_url: "${flood.baseUrl}" }
  stream: ${stream}
  limits: { ${limits} }
prompt: Answer at length.
outputs: [answer.txt]
`);
    const before = isolateBytes();
    const outcome = await runFile(file, { runs: t.runs });
    const grew = isolateBytes() - before;
    const { events, record } = await eventsOf(t.runs, outcome.runId);
    const last = events.at(-1)!;
    const text = JSON.stringify(events.slice(-2));
    const recorded = last.type === "run_failed" && last.data.error === "PayloadTooLarge" &&
      events.some((e) =>
        e.type === "step_failed" && e.data.step === "model_called" && e.data.error === "PayloadTooLarge"
      );
    // Cut at the limit: far less than the 300 MB offered was read.
    const cut = flood.sent < 100 * 1024 * 1024;
    tally.add(name, { stopped: outcome.status === "failed" && cut, recorded });
    assert.equal(outcome.status, "failed", name);
    assert.ok(cut, `${name}: the server sent ${flood.sent} bytes`);
    assert.ok(recorded, `${name}: ${JSON.stringify(last.data)} ${text.slice(-1500)}`);
    assert.ok(grew < 400 * 1024 * 1024, `${name}: provr grew by ${grew} bytes`);
    assert.deepEqual((await verifyRun(record)).problems.map((p) => p.message), [], name);
  }
});

Deno.test("the size attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});
