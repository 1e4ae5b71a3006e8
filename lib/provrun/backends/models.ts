/**
 * Model routes: `openai:<model>`, `anthropic:<model>`, `openai-compatible:<model>` (with the base URL and the
 * key's variable in the run file) and `test:<script>`, a scripted model that needs no network and no key.
 * @module
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { isAbsolute, resolve } from "node:path";
import { ProveviError } from "../../provevi/evidence/errors.ts";
import type { AgentSpec } from "../run/run_file.ts";
import { checkScript, loadScript, ScriptedModel } from "./scripted_model.ts";
import { DEFAULT_MODEL_BYTES, limitedFetch, namingLimit } from "./model_limit.ts";

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
  const host = provider === "openai"
    ? "api.openai.com:443"
    : provider === "anthropic"
    ? "api.anthropic.com:443"
    : provider === "openai-compatible"
    ? hostOf(agent.provider!.base_url)
    : null;
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
 * @throws ProveviError for a key that is not set, or a script that cannot be read.
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
  const key = (name: string) => {
    const value = env(name);
    if (!value) {
      throw new ProveviError(
        `the model route ${agent.model} needs the variable ${name}; set it, or use a test: model`,
      );
    }
    return value;
  };
  switch (route.provider) {
    case "openai":
      return namingLimit(
        createOpenAI({ apiKey: key("OPENAI_API_KEY"), fetch })(route.model) as LanguageModelV4,
      );
    case "anthropic":
      return namingLimit(
        createAnthropic({ apiKey: key("ANTHROPIC_API_KEY"), fetch })(route.model) as LanguageModelV4,
      );
    case "openai-compatible": {
      const keyName = agent.provider?.api_key_env;
      return namingLimit(
        createOpenAICompatible({
          name: "openai-compatible",
          baseURL: agent.provider!.base_url,
          ...(keyName ? { apiKey: key(keyName) } : {}),
          includeUsage: true,
          fetch,
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
