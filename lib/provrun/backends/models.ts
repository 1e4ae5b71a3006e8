/**
 * Model routes: `openai:<model>`, `anthropic:<model>`, `openai-compatible:<model>` (with the base URL and the
 * key's variable in the run file) and `test:<script>`, a scripted model that needs no network and no key; the
 * variable that holds a route's key, and the check before a run starts that it is set.
 * @module
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { isAbsolute, resolve } from "node:path";
import { ProveviError } from "../../provevi/evidence/errors.ts";
import { ModelKeyMissing } from "../run/errors.ts";
import type { AgentSpec } from "../run/run_file.ts";
import { checkScript, loadScript, ScriptedModel } from "./scripted_model.ts";
import { DEFAULT_MODEL_BYTES, limitedFetch, namingLimit } from "./model_limit.ts";
import { askTokenIds, tokenIdsExtractor } from "./token_ids.ts";

/** The provider and model of a route, and the host it reaches (null for `test:`). */
export interface ModelRoute {
  provider: "openai" | "anthropic" | "openai-compatible" | "test";
  model: string;
  /** The host and port the model's requests go to, for the run's net permission. */
  host: string | null;
}

/**
 * Parses a model route.
 * @throws ProveviError for an unknown provider, an empty model, or openai-compatible without a base URL.
 */
export function parseRoute(agent: Pick<AgentSpec, "model" | "provider">): ModelRoute {
  const i = agent.model.indexOf(":");
  const provider = agent.model.slice(0, i) as ModelRoute["provider"];
  const model = agent.model.slice(i + 1);
  if (i < 0 || !["openai", "anthropic", "openai-compatible", "test"].includes(provider)) {
    throw new ProveviError(
      `model route "${agent.model}" names no provider: use openai:, anthropic:, openai-compatible: or test:`,
    );
  }
  if (!model && !(provider === "test")) throw new ProveviError(`model route "${agent.model}" names no model`);
  if (provider === "openai-compatible" && !agent.provider?.base_url) {
    throw new ProveviError(`model route "${agent.model}" needs agent.provider.base_url in the run file`);
  }
  // agent.provider.base_url is where the requests go, for every provider but the scripted one
  const host = provider === "test"
    ? null
    : agent.provider?.base_url
    ? hostOf(agent.provider.base_url)
    : provider === "openai"
    ? "api.openai.com:443"
    : "api.anthropic.com:443";
  return { provider, model, host };
}

function hostOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`;
}

/**
 * The language model of a run's agent.
 *
 * @param agent The agent spec.
 * @param options `folder`: what a `test:` script path is relative to; `env`: where API keys are read;
 * `responseBytes`: the largest response body of one request ({@linkcode DEFAULT_MODEL_BYTES} by default).
 * @returns The provider's model (not yet captured).
 * @throws ModelKeyMissing for a key that is not set; ProveviError for a script that cannot be read.
 * @example
 * ```ts
 * import { modelOf } from "./models.ts";
 * const model = await modelOf({ model: "test:fixtures/tour/models/answer.yaml" }, { folder: "." });
 * ```
 */
export async function modelOf(
  agent: Pick<AgentSpec, "model" | "provider" | "script">,
  options: { folder: string; env?: (name: string) => string | undefined; responseBytes?: number },
): Promise<LanguageModelV4> {
  const route = parseRoute(agent);
  const fetch = limitedFetch(options.responseBytes ?? DEFAULT_MODEL_BYTES);
  const env = options.env ?? ((name: string) => Deno.env.get(name));
  // runFile checked the key before the run started (checkModelKey); a caller of modelOf alone gets the same error
  checkModelKey(agent, env);
  const keyName = routeKeyName(agent);
  const apiKey = keyName === null ? undefined : env(keyName);
  switch (route.provider) {
    // Each provider's package is loaded when a run uses it: most commands start without any.
    case "openai": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      return namingLimit(
        createOpenAI({ apiKey, fetch, ...baseUrl(agent, "") })(route.model) as LanguageModelV4,
      );
    }
    case "anthropic": {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      // Anthropic's base URL is its root (as Claude Code takes it), with or without /v1; the AI SDK's has /v1.
      return namingLimit(
        createAnthropic({ apiKey, fetch, ...baseUrl(agent, "/v1") })(route.model) as LanguageModelV4,
      );
    }
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      return namingLimit(
        createOpenAICompatible({
          name: "openai-compatible",
          baseURL: agent.provider!.base_url,
          ...(apiKey ? { apiKey } : {}),
          includeUsage: true,
          fetch,
          // The exact tokens of each call, where the run asks for them and the server returns them (vLLM).
          ...(agent.provider!.token_ids
            ? { transformRequestBody: askTokenIds, metadataExtractor: tokenIdsExtractor }
            : {}),
        }).chatModel(route.model) as LanguageModelV4,
      );
    }
    case "test": {
      if (agent.script !== undefined) {
        return new ScriptedModel(checkScript(agent.script, "agent.script"), {
          name: route.model || "inline",
        });
      }
      if (!route.model) {
        throw new ProveviError("a test: model needs a script file (test:path.yaml) or agent.script");
      }
      const path = isAbsolute(route.model) ? route.model : resolve(options.folder, route.model);
      return new ScriptedModel(await loadScript(path), { name: route.model });
    }
  }
}

/** The `baseURL` option of a provider: `agent.provider.base_url`, ending with `suffix` once; none when unset. */
function baseUrl(agent: Pick<AgentSpec, "provider">, suffix: string): { baseURL?: string } {
  const url = agent.provider?.base_url;
  if (!url) return {};
  const trimmed = url.replace(/\/+$/, "");
  return { baseURL: suffix && !trimmed.endsWith(suffix) ? `${trimmed}${suffix}` : trimmed };
}

/** The parts of the agent spec that name the key. */
export type KeyedAgent = Pick<AgentSpec, "model" | "provider"> & Partial<Pick<AgentSpec, "backend">>;

/**
 * The variable that holds the key of the run's model, or null when it needs none: a `test:` route, or an
 * `openai-compatible:` route without `agent.provider.api_key_env`. Every other route (and an agent program,
 * `claude-code` or `codex`) takes `agent.provider.api_key_env`, else its provider's usual variable.
 *
 * @param agent The agent spec.
 * @returns The variable's name, or null.
 * @example
 * ```ts
 * import { routeKeyName } from "./model_key.ts";
 * routeKeyName({ model: "openai:gpt-4o" }); // "OPENAI_API_KEY"
 * routeKeyName({ model: "test:" }); // null
 * ```
 */
export function routeKeyName(agent: KeyedAgent): string | null {
  if (agent.backend === "claude-code") return agent.provider?.api_key_env ?? "ANTHROPIC_API_KEY";
  if (agent.backend === "codex") return agent.provider?.api_key_env ?? "OPENAI_API_KEY";
  const route = parseRoute(agent);
  switch (route.provider) {
    case "openai":
      return agent.provider?.api_key_env ?? "OPENAI_API_KEY";
    case "anthropic":
      return agent.provider?.api_key_env ?? "ANTHROPIC_API_KEY";
    case "openai-compatible":
      return agent.provider?.api_key_env ?? null;
    case "test":
      return null;
  }
}

/**
 * Refuses a run whose model needs a key that is not set, before the run starts.
 *
 * @param agent The agent spec.
 * @param env Reads the variable; `Deno.env` by default (a variable the process may not read counts as unset:
 *   the permission check before the run names its flag).
 * @throws ModelKeyMissing naming the route, the variable and the fix.
 * @example
 * ```ts
 * import { checkModelKey } from "./model_key.ts";
 * checkModelKey({ model: "openai:gpt-4o" }, () => "sk-…"); // passes
 * ```
 */
export function checkModelKey(agent: KeyedAgent, env?: (name: string) => string | undefined): void {
  const name = routeKeyName(agent);
  if (name === null || readVariable(name, env)) return;
  const program = agent.backend === "claude-code" || agent.backend === "codex";
  throw new ModelKeyMissing(
    program
      ? `the ${agent.backend} backend's model ${agent.model} needs the variable ${name}, which is not set; ` +
        `set it for provr (agent.provider.api_key_env names another variable)`
      : `the model route ${agent.model} needs the variable ${name}; set it, or use a test: model`,
  );
}

function readVariable(name: string, env?: (name: string) => string | undefined): string | undefined {
  try {
    return (env ?? ((n: string) => Deno.env.get(n)))(name);
  } catch {
    return undefined;
  }
}
