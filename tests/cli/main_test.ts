/**
 * `runProgram` (cli/_main.ts): a user's mistake is one line and its class's exit code; anything else is a bug
 * and is thrown again.
 */
import assert from "node:assert/strict";
import { Command } from "commander";
import { bufferIo } from "../../cli/_io.ts";
import { runProgram, UsageError } from "../../cli/_main.ts";
import { EvidenceReadError } from "../../lib/provevi/evidence/errors.ts";
import { CatalogError } from "../../lib/provcat/errors.ts";
import { CancelledError, ModelKeyMissing } from "../../lib/provrun/run/errors.ts";

async function exitOf(error: unknown) {
  const io = bufferIo();
  const program = new Command("provr");
  program.command("go").action(() => {
    throw error;
  });
  const code = await runProgram(program, ["go"], { io, result: { code: 0 } });
  return { code, err: io.stderr };
}

Deno.test("runProgram() maps each user error to one line and its class's exit code", async () => {
  const cases: [unknown, number, string][] = [
    [
      new ModelKeyMissing("the model route openai:x needs the variable OPENAI_API_KEY\nmore"),
      1,
      "provr: the model route openai:x needs the variable OPENAI_API_KEY",
    ],
    [new CancelledError("the run was cancelled"), 1, "provr: the run was cancelled"],
    [new CatalogError("no route for data://x"), 1, "provr: no route for data://x"],
    [new UsageError("give a run"), 2, "provr: give a run"],
    [
      new EvidenceReadError("events.jsonl line 3 is not an event"),
      2,
      "provr: events.jsonl line 3 is not an event",
    ],
    [
      new Deno.errors.NotFound("no such file: x.yaml"),
      1,
      "provr: NotFound: no such file: x.yaml; check the paths given",
    ],
  ];
  for (const [error, code, line] of cases) {
    assert.deepEqual(await exitOf(error), { code, err: [line] }, String(error));
  }
});

Deno.test("runProgram() throws again what no user causes: a programming error, or an error that only looks like a user's", async () => {
  await assert.rejects(() => exitOf(new TypeError("x is not a function")), TypeError);
  const lookalike = Object.assign(new Error("not ours"), { name: "SomethingError", exitCode: 1 });
  await assert.rejects(() => exitOf(lookalike), /not ours/);
});
