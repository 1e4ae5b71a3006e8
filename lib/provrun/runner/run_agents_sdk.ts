/**
 * `runAgentsSdk`: an app built on the OpenAI Agents SDK becomes a recorded run, in process. The run is `runFile`
 * over a run file made from the agent and the task (the agent's `backend` is `call`, so the run file's checks, its
 * model key and its parts hold as for any run); the app runs in place of the call backend, and the SDK's spans
 * are the run's model and tool calls, through {@linkcode ProvrunTracingProcessor}, the SDK's only processor while
 * the app runs: no trace goes to OpenAI.
 * @module
 */
import type { AgentSpec } from "../run/run_file.ts";
import { RunFile } from "../run/run_file.ts";
import { type AgentsSdkApp, AgentsSdkBackend } from "../backends/agents_sdk_backend.ts";
import type { AgentTask } from "./run_agent.ts";
import { runFile, type RunOptions, type RunOutcome } from "./run.ts";

/** The agent of an Agents SDK app, as a run file's `agent` without its `backend`. */
export type AgentsSdkAgent = Omit<AgentSpec, "backend">;

/**
 * Runs an app built on the OpenAI Agents SDK as a run: its model calls, tool calls, handoffs and guardrails are
 * the run's evidence, from the SDK's spans.
 *
 * @param app The app: the prompt in, its final answer out; it builds its agents and calls the SDK's `run`.
 * @param task The agent (its name and model, for the run's record and the model's key) and the task.
 * @param options As {@linkcode runFile} takes them, without `backend`.
 * @returns The outcome; an app that throws fails the run, with the SDK's spans recorded so far.
 * @throws RunFileError when the agent or the task would not make a valid run file; otherwise what
 *   {@linkcode runFile} throws.
 * @example
 * ```ts
 * import { findRun, runAgentsSdk, verifyRun } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const runs = await Deno.makeTempDir();
 * const outcome = await runAgentsSdk(
 *   ({ prompt }) => Promise.resolve(`echo: ${prompt}`),
 *   {
 *     // the SDK app calls its own model; a `test:` model needs no key
 *     agent: { name: "echo", model: "test:", script: { model: "echo-1", turns: [{ text: "unused" }] } },
 *     run: { org: "acme", domain: "demo", env: "dev" },
 *     prompt: "hi",
 *   },
 *   { runs },
 * );
 * assert.equal(outcome.status, "completed", outcome.error?.message);
 * assert.equal(outcome.text, "echo: hi");
 * assert.equal((await verifyRun(await findRun(outcome.folder))).ok, true);
 * ```
 */
export async function runAgentsSdk(
  app: AgentsSdkApp,
  task: AgentTask & { agent: AgentsSdkAgent },
  options: Omit<RunOptions, "backend"> = {},
): Promise<RunOutcome> {
  if (typeof app !== "function") throw new TypeError("runAgentsSdk: app must be a function");
  if (task === null || typeof task !== "object") throw new TypeError("runAgentsSdk: task must be an object");
  const file = RunFile.fromObject({ ...task, agent: { ...task.agent, backend: "call" } });
  return await runFile(file, { ...options, backend: new AgentsSdkBackend(app) });
}
