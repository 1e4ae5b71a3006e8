import assert from "node:assert/strict";
import { findRun, verifyRun } from "../../../lib/provevi/runs/mod.ts";
import { FileStore } from "../../../lib/provevi/store/mod.ts";
import { readEventsText } from "../../../lib/provevi/evidence/mod.ts";
import { RunFile, RunFileError } from "../../../lib/provrun/run/mod.ts";
import { runAgent, runFile } from "../../../lib/provrun/runner/mod.ts";

const AGENT = {
  name: "q",
  backend: "call",
  model: "test:",
  script: { model: "answer-1", turns: [{ text: "Revenue grew 12% in Q3." }] },
} as const;
const TASK = {
  run: { org: "acme", domain: "demo", env: "dev", actor: "ada" },
  prompt: "What was the growth?",
};

Deno.test("runAgent() runs an agent held as data and returns the outcome of a verified run", async () => {
  const runs = await Deno.makeTempDir();
  const outcome = await runAgent({ ...AGENT }, TASK, { runs });
  assert.equal(outcome.status, "completed");
  assert.equal(outcome.text, "Revenue grew 12% in Q3.");
  assert.equal(outcome.manifest?.status, "completed");
  const run = await findRun(outcome.folder);
  assert.equal((await verifyRun(run)).ok, true);
});

Deno.test("runAgent() records what runFile() records for the same agent and task", async () => {
  const runs = await Deno.makeTempDir();
  const now = new Date(Date.UTC(2026, 11, 1, 12, 0, 0));
  const byAgent = await runAgent({ ...AGENT }, TASK, { runs, now });
  const byFile = await runFile(RunFile.fromObject({ ...TASK, agent: { ...AGENT } }), { runs, now });
  const store = new FileStore({ runs });
  const types = async (runId: string) =>
    readEventsText((await (await store.readRun(runId)).eventsText())!).events.map((e) => e.type);
  assert.deepEqual(await types(byAgent.runId), await types(byFile.runId));
  assert.notEqual(byAgent.runId, byFile.runId);
});

Deno.test("runAgent() refuses an agent that would not make a valid run file, before any run folder exists", async () => {
  const runs = await Deno.makeTempDir();
  await assert.rejects(
    () => runAgent({ ...AGENT, backend: "nope" as "call" }, TASK, { runs }),
    RunFileError,
  );
  assert.deepEqual([...Deno.readDirSync(runs)], []);
});
