/**
 * Sizes: a tool result past its limit is refused and recorded and the run goes on (provr does not run out of
 * memory); an output past its limit fails the run, sealed, with the outputs recorded.
 * @module
 */
import assert from "node:assert/strict";
import { verifyRun } from "../../lib/provevi/mod.ts";
import { runFile } from "../../lib/provrun/mod.ts";
import { agentFile, eventsOf } from "../provrun/_agent.ts";
import { gitCatalog } from "../provrun/_catalog.ts";
import { Tally } from "./_tally.ts";

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
  assert.deepEqual((await verifyRun(record)).problems, []);
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
    assert.deepEqual((await verifyRun(record)).problems, []);
  }
});

Deno.test("the size attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});
