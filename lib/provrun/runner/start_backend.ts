/**
 * Step 5 of a run: its backend, started on the staged inputs with the run's model (the route's provider, or the
 * model a part serves, wrapped by the capture that records each request) and the parts' tool hooks, to its end.
 * @module
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { Backend, BackendResult } from "../backends/backend.ts";
import { AgentBackend } from "../backends/agent_backend.ts";
import { CallBackend } from "../backends/call_backend.ts";
import { captureModel } from "../backends/capture.ts";
import { modelOf } from "../backends/models.ts";
import { modelServer } from "../backends/model_server.ts";
import type { BackendSetup, PartRun } from "../run/run_part.ts";
import type { StagedInput } from "../run/stager.ts";
import { programBackend, UNCALLED_MODEL } from "./program_backends.ts";
import type { RunParts } from "./run_parts.ts";

/** What the backend of a run is started with. */
export interface BackendStart {
  /** The run's parts. */
  parts: RunParts;
  /** The backend to use instead of the run file's. */
  backend?: Backend | undefined;
  /** Reads variables (API keys). */
  env?: ((name: string) => string | undefined) | undefined;
}

/**
 * Runs the run's backend to its end.
 *
 * @param run The run.
 * @param inputs The staged inputs.
 * @param options The parts, and a backend in place of the run file's.
 * @returns The backend's result; a failed backend is a result, not an exception.
 */
export async function runBackend(
  run: PartRun,
  inputs: StagedInput[],
  options: BackendStart,
): Promise<BackendResult> {
  const spec = run.file.data;
  const setup = await options.parts.prepareBackend({ agent: spec.agent, env: options.env }, run);
  const program = await programBackend(setup.agent, setup.env); // an agent program makes its own model calls
  const model = program ? UNCALLED_MODEL : await runModel(run, { setup, parts: options.parts });
  const backend = options.backend ?? program ??
    (setup.agent.backend === "agent" ? new AgentBackend() : new CallBackend());
  const wrapTool = options.parts.wrapTool();
  await backend.start({
    ctx: run.ctx,
    agent: setup.agent,
    prompt: spec.prompt,
    inputs,
    outputs: spec.outputs ?? [],
    model,
    folder: run.file.folder,
    sessionId: spec.run.session_id ?? null,
    ...(wrapTool ? { wrapTool } : {}),
    ...(setup.facts ? { facts: setup.facts } : {}),
    ...(setup.toolDescription ? { toolDescription: setup.toolDescription } : {}),
    ...(setup.servedTools ? { servedTools: setup.servedTools } : {}),
  });
  return await backend.result();
}

/** The run's model, each request it answers recorded, its text and usage given to the parts. */
async function runModel(
  run: PartRun,
  options: { setup: BackendSetup; parts: RunParts },
): Promise<LanguageModelV4> {
  const { agent, env } = options.setup;
  const { parts } = options;
  const model = await parts.modelFor(agent, run) ?? await modelOf(agent, {
    folder: run.file.folder,
    ...(env ? { env } : {}),
    responseBytes: agent.limits?.model_bytes, // harden: a model's answer is cut past its limit
  });
  const price = parts.price;
  return captureModel(model, run.ctx.recorder, {
    component: agent.backend === "call" ? "CallBackend" : "AgentBackend",
    // a model gateway records each call at the boundary; the capture then only observes
    record: !options.setup.modelCallsRecorded,
    ...(price ? { price } : {}),
    // the run file's route and base URL, not a gateway's: the conventions name the server behind it
    server: modelServer(run.file.data.agent, env ?? ((name) => Deno.env.get(name))),
    conversationId: run.file.data.run.session_id ?? null,
    onText: (piece) => parts.onText(piece),
    onReply: (reply) => parts.onReply(reply),
    onUsage: (usage) => parts.onUsage(usage),
  });
}
