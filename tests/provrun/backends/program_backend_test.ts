import assert from "node:assert/strict";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { removeWritable } from "../../_files.ts";

for (const backend of ["claude-code", "codex"]) {
  Deno.test(`a ${backend} run whose program is not installed fails in one line that says how to fix it, and verifies`, async () => {
    const runs = await Deno.makeTempDir({ prefix: "provrun-program-" });
    try {
      const model = backend === "codex" ? "openai:gpt-5" : "anthropic:claude-sonnet-4-5";
      const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent: { name: a, backend: ${backend}, model: "${model}", program: /nonexistent/agent-program }
prompt: hi
`);
      const key = backend === "codex" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
      const outcome = await runFile(file, { runs, env: (name) => (name === key ? "sk-fake" : undefined) });
      assert.equal(outcome.status, "failed");
      assert.equal(outcome.error?.name, "ProveviError");
      assert.match(
        outcome.error!.message,
        /cannot start \/nonexistent\/agent-program .*set agent\.program to its path/,
      );
      const record = await new FileStore({ runs }).readRun(outcome.runId);
      const events = readEventsText((await record.eventsText())!).events;
      const types = events.map((e) => e.type);
      assert.ok(types.includes("sandbox_started"));
      assert.ok(types.includes("sandbox_completed"));
      assert.equal(types.at(-1), "run_failed");
      const check = await verifyRun(await findRun(outcome.folder));
      assert.ok(check.ok, JSON.stringify(check.problems));
    } finally {
      await removeWritable(runs);
    }
  });
}

Deno.test("a run file refuses a backend that is not one of call, agent, claude-code, codex", () => {
  assert.throws(
    () =>
      RunFile.parse(`
run: { org: acme, domain: demo, env: dev }
agent: { name: a, backend: cursor, model: "openai:x" }
prompt: hi
`),
    /agent\.backend.*claude-code/,
  );
});
