/**
 * Where a run's model calls go, as the GenAI conventions name it: the provider's well-known name
 * (`gen_ai.provider.name`) and the server's address and port (`server.address`, `server.port`), from the model
 * route and the base URL the run file or the provider's variable gives.
 * @module
 */
import { providerName } from "../../provevi/telemetry/mod.ts";
import type { AgentSpec } from "../run/run_file.ts";
import { parseRoute } from "./models.ts";

/** The provider and server of a run's model. */
export interface ModelServer {
  /** The conventions' `gen_ai.provider.name`: `openai`, `anthropic`, … where one applies. */
  provider: string;
  /** The host the requests go to, or null for a model in the process (`test:`). */
  address: string | null;
  /** Its port, or null. */
  port: number | null;
}

const DEFAULT_BASE: Readonly<Record<string, { url: string; variable: string }>> = {
  openai: { url: "https://api.openai.com/v1", variable: "OPENAI_BASE_URL" },
  anthropic: { url: "https://api.anthropic.com/v1", variable: "ANTHROPIC_BASE_URL" },
};

/**
 * The provider and server of a run's model route.
 *
 * @param agent The run file's agent: its `model` route and `provider.base_url`.
 * @param env Reads a variable (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, which the AI SDK's providers read too).
 * @returns The provider's name and the server's address and port.
 * @example
 * ```ts
 * import { modelServer } from "./model_server.ts";
 * modelServer({ model: "anthropic:claude-sonnet-4-5" }, () => undefined);
 * // { provider: "anthropic", address: "api.anthropic.com", port: 443 }
 * ```
 */
export function modelServer(
  agent: Pick<AgentSpec, "model" | "provider">,
  env: (name: string) => string | undefined = () => undefined,
): ModelServer {
  const route = parseRoute(agent);
  if (route.provider === "test") return { provider: providerName("test"), address: null, port: null };
  const fallback = DEFAULT_BASE[route.provider];
  const base = agent.provider?.base_url ??
    (fallback ? readable(env, fallback.variable) ?? fallback.url : null);
  let url: URL | null = null;
  try {
    url = base ? new URL(base) : null;
  } catch { /* parseRoute checked the run file's URL; a variable that is not one names no server */ }
  if (!url) return { provider: providerName(route.provider), address: null, port: null };
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const address = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return { provider: providerName(route.provider, address), address, port };
}

function readable(env: (name: string) => string | undefined, name: string): string | undefined {
  try {
    return env(name) || undefined;
  } catch {
    return undefined;
  }
}
