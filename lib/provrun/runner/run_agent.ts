/**
 * `runAgent`: an agent spec and a task become a recorded run, for a program that holds its agent as data rather
 * than as a run file. It is `runFile` over a run file made from the two, so the run goes through the one core and
 * records the same evidence (its `run_created` payload is that file).
 * @module
 */
import type { AgentSpec, RunFileData } from "../run/run_file.ts";
import { RunFile } from "../run/run_file.ts";
import { runFile, type RunOptions, type RunOutcome } from "./run.ts";

/** What {@linkcode runAgent} asks of the agent: a run file without its `agent`. */
export type AgentTask = Omit<RunFileData, "agent">;

/**
 * Runs an agent on a task: the library entry for a program that builds its agent in code.
 *
 * Paths in the agent (a test script, a tools folder) are relative to the working folder, as for a run file made
 * in a program.
 *
 * @param agent The agent, as a run file's `agent` section.
 * @param task The run section, the prompt, and the inputs, outputs, experiment and telemetry, as in a run file.
 * @param options The catalog, the store, a cancel signal, as {@linkcode runFile} takes.
 * @returns The outcome; a failed run is an outcome, not an exception.
 * @throws RunFileError when the agent or the task would not make a valid run file, naming every problem, before
 *   anything is written; otherwise what {@linkcode runFile} throws.
 * @example
 * ```ts
 * import { findRun, runAgent, verifyRun } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const runs = await Deno.makeTempDir();
 * const outcome = await runAgent(
 *   { name: "hello", backend: "call", model: "test:", script: { model: "echo-1", turns: [{ text: "Hello." }] } },
 *   { run: { org: "acme", domain: "demo", env: "dev" }, prompt: "Say hello." },
 *   { runs },
 * );
 * assert.equal(outcome.status, "completed");
 * assert.equal(outcome.text, "Hello.");
 * assert.equal((await verifyRun(await findRun(outcome.folder))).ok, true);
 * ```
 */
export async function runAgent(
  agent: AgentSpec,
  task: AgentTask,
  options: RunOptions = {},
): Promise<RunOutcome> {
  if (agent === null || typeof agent !== "object") throw new TypeError("runAgent: agent must be an object");
  if (task === null || typeof task !== "object") throw new TypeError("runAgent: task must be an object");
  return await runFile(RunFile.fromObject({ ...task, agent }), options);
}
