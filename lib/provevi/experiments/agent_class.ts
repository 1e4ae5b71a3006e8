/**
 * Agent classes and versions. A class is the agent's name in its run's org, domain and environment; a
 * version is the SHA-256 of the canonical JSON of the agent's spec without its prompt and inputs, which are
 * the task and not the agent. The settings kept in tables never hold secrets.
 * @module
 */
import canonicalize from "canonicalize";
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import { sha256Hex } from "../evidence/hash.ts";

/** What a `run_created` event says of the run's agent. */
export interface AgentOfRun {
  /** The class, `org/domain/env/name`. */
  agent: string;
  org: string;
  domain: string;
  env: string;
  /** The agent's name. */
  name: string;
  /** The SHA-256 of the spec without prompt and inputs. */
  version: string;
  backend: string | null;
  model: string | null;
  /** The tools, as canonical JSON, secrets left out; null when the spec has none. */
  tools: string | null;
  /** The limits, as canonical JSON, secrets left out; null when the spec has none. */
  limits: string | null;
}

const SECRET_KEY = /(key|token|secret|passw|pwd|credential|auth|cookie|bearer|private)/i;

/**
 * The agent spec of a `run_created` event: its `data.spec`, or, for a run that recorded none, the agent's
 * name, backend and model.
 *
 * @param data The event's data.
 * @returns The spec as an object.
 */
export function agentSpec(data: { [key: string]: Json }): { [key: string]: Json } {
  const spec = data.spec;
  if (spec && typeof spec === "object" && !Array.isArray(spec)) return spec;
  const made: { [key: string]: Json } = {};
  for (const key of ["agent", "backend", "model"]) {
    const value = data[key];
    if (value !== undefined && value !== null) made[key === "agent" ? "name" : key] = value;
  }
  return made;
}

/**
 * The version of an agent spec: the SHA-256 of its canonical JSON without `prompt` and `inputs`.
 *
 * @param spec The agent spec.
 * @returns 64 hex digits.
 * @example
 * ```ts
 * import { agentVersion } from "./agent_class.ts";
 * agentVersion({ name: "q", model: "test:x", prompt: "a" }) === agentVersion({ name: "q", model: "test:x" }); // true
 * ```
 */
export function agentVersion(spec: { [key: string]: Json }): string {
  const { prompt: _prompt, inputs: _inputs, ...rest } = spec;
  return sha256Hex(canonicalize(rest) ?? "{}");
}

/**
 * A JSON value with every key that looks like a secret (key, token, secret, password, credential, auth …)
 * left out, at any depth.
 *
 * @param value A JSON value.
 * @returns The value without secrets.
 * @example
 * ```ts
 * import { withoutSecrets } from "./agent_class.ts";
 * withoutSecrets({ max_steps: 5, api_key: "sk-x" }); // { max_steps: 5 }
 * ```
 */
export function withoutSecrets(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value && typeof value === "object") {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) {
      if (SECRET_KEY.test(k) && !/^max_.*tokens$|_tokens$|^tokens$/i.test(k)) continue;
      out[k] = withoutSecrets(v);
    }
    return out;
  }
  return value;
}

const text = (v: Json | undefined): string | null => (typeof v === "string" && v !== "" ? v : null);
const jsonOrNull = (v: Json | undefined): string | null =>
  v === undefined || v === null ? null : canonicalize(withoutSecrets(v)) ?? null;

/**
 * The agent class and version that a `run_created` event gives, or null when it names no agent or lacks its
 * org, domain or environment.
 *
 * @param event The run's `run_created` event.
 * @returns The class, version and settings.
 */
export function agentOfRun(event: EvidenceEvent): AgentOfRun | null {
  const d = event.data;
  const spec = agentSpec(d);
  const name = text(d.agent) ?? text(spec.name);
  const org = text(d.org), domain = text(d.domain), env = text(d.env);
  if (!name || !org || !domain || !env) return null;
  return {
    agent: `${org}/${domain}/${env}/${name}`,
    org,
    domain,
    env,
    name,
    version: agentVersion(spec),
    backend: text(d.backend) ?? text(spec.backend),
    model: text(d.model) ?? text(spec.model),
    tools: jsonOrNull(spec.tools ?? d.tools),
    limits: jsonOrNull(spec.limits ?? d.limits),
  };
}

/**
 * The settings of a run, as its `provevi_run_params` rows hold them: agent, backend, model, mode, tools and
 * limits, each as canonical JSON. The agent's `settings` never go in, nor any key that looks like a secret.
 *
 * @param event The run's `run_created` event.
 * @returns The settings by key.
 */
export function runParams(event: EvidenceEvent): Map<string, string> {
  const params = new Map<string, string>();
  const d = event.data;
  const spec = agentSpec(d);
  const put = (key: string, value: Json | undefined) => {
    if (value === undefined || value === null) return;
    params.set(key, canonicalize(withoutSecrets(value)) ?? "null");
  };
  put("agent", d.agent ?? spec.name);
  put("backend", d.backend ?? spec.backend);
  put("model", d.model ?? spec.model);
  put("mode", d.mode);
  put("tools", spec.tools ?? d.tools);
  put("limits", spec.limits ?? d.limits);
  return params;
}
