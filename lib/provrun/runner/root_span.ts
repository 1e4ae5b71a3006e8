/**
 * The attributes of a run's root span, `invoke_agent <agent>`, as the run starts (the GenAI conventions,
 * v1.41.1, "Invoke agent span"): the operation, the provider and model of the run's route, the agent's name,
 * its ID (its class, `org/domain/env/name`) and version (the SHA-256 of its spec that `run_created` records as
 * `agent_version`), and the run's session as the conversation. The token counts, settings and content of its
 * model calls are added as they end (`telemetry/root_summary.ts`); a failed run's `error.type` at its end.
 * @module
 */
import type { Attributes } from "@opentelemetry/api";
import type { Json } from "../../provevi/mod.ts";
import { agentVersion } from "../../provevi/experiments/mod.ts";
import { modelServer } from "../backends/model_server.ts";
import { parseRoute } from "../backends/models.ts";
import type { RunFile } from "../run/run_file.ts";

/**
 * The root span's attributes as the run starts.
 *
 * @param file The run file.
 * @param env Reads a variable (the provider's base URL).
 * @returns The attributes.
 * @example
 * ```ts
 * import { RunFile } from "../run/run_file.ts";
 * import { rootAttributes } from "./root_span.ts";
 * const file = await RunFile.load("fixtures/tour/run.yaml");
 * rootAttributes(file, () => undefined)["gen_ai.operation.name"]; // "invoke_agent"
 * ```
 */
export function rootAttributes(file: RunFile, env: (name: string) => string | undefined): Attributes {
  const { run, agent } = file.data;
  let provider: string | null = null;
  let model = agent.model;
  try {
    const route = parseRoute(agent);
    // a scripted model without a script path is named "inline", as its chat spans name it
    model = route.model || (route.provider === "test" ? "inline" : agent.model);
    provider = modelServer(agent, env).provider;
  } catch { /* a route the run refuses later: the root keeps the run file's text */ }
  return {
    "gen_ai.operation.name": "invoke_agent",
    ...(provider ? { "gen_ai.provider.name": provider } : {}),
    "gen_ai.request.model": model,
    "gen_ai.agent.name": agent.name,
    "gen_ai.agent.id": `${run.org}/${run.domain}/${run.env}/${agent.name}`,
    "gen_ai.agent.version": agentVersion(agent as unknown as { [key: string]: Json }),
    ...(run.session_id ? { "gen_ai.conversation.id": run.session_id } : {}),
  };
}
