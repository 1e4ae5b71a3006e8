import assert from "node:assert/strict";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { RunFileError } from "../../../lib/provrun/run/errors.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { runAgent } from "../../../lib/provrun/runner/run_agent.ts";

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
