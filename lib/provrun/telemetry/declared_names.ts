/**
 * Names a run declared, for destinations below `bodies`: a value that the model or a tool chose (a tool name
 * the model made up, a tool call's ID, the model a response claims, an error's `name`) can carry data out of a
 * run as a "name", since `plainName` passes any short hex or base64 text. So below `bodies` such a value is
 * sent only when the run declared it (a tool in `agent.tools`, the model the run file asked for, an error name
 * of {@linkcode KNOWN_ERROR_NAMES}); anything else goes as its label and a short hash (`tool:3f2a…`).
 * @module
 */
import { createHash } from "node:crypto";

/** What a run declared: its tools, its model and its agent. */
export interface DeclaredNames {
  tools: ReadonlySet<string>;
  models: ReadonlySet<string>;
  /** The run's agent by its class (`org/domain/env/name`), which `gen_ai.agent.id` holds. */
  agents?: ReadonlySet<string>;
}

/** The error names that are sent as they are: the toolkit's own, Deno's, JavaScript's and the AI SDK's. */
export const KNOWN_ERROR_NAMES: readonly string[] = [
  "Error",
  "TypeError",
  "RangeError",
  "SyntaxError",
  "ReferenceError",
  "AbortError",
  "TimeoutError",
  "NotCapable",
  "PermissionDenied",
  "NotFound",
  "AlreadyExists",
  "PathRefused",
  "ToolTimeout",
  "ToolFailed",
  "ToolSetError",
  "ResultTooLarge",
  "SandboxExited",
  "SandboxError",
  "McpToolError",
  "CancelledError",
  "InputChanged",
  "LinkFound",
  "AccessDenied",
  "EvidenceError",
  "ProveviError",
  "AI_APICallError",
  "AI_NoSuchToolError",
  "AI_InvalidToolInputError",
  "AI_TypeValidationError",
  "AI_JSONParseError",
  "AI_RetryError",
];

/** The attributes whose values the model or a tool chooses, and the label each goes as when undeclared. */
export const CHOSEN_ATTRIBUTES: Readonly<Record<string, string>> = {
  "gen_ai.tool.name": "tool",
  "gen_ai.tool.call.id": "tool_call",
  "gen_ai.request.model": "model",
  "gen_ai.response.model": "model",
  "gen_ai.response.id": "response",
  "error.type": "error",
};

/**
 * The names a run file declares: the tools of `agent.tools` (the built-in default when it is not set), its
 * model, as the run file gives it and without its route (`openai:gpt-4o` and `gpt-4o`), and its agent's class.
 *
 * @param agent The run file's agent: `tools`, `model`.
 * @param defaults The tools a run gets when `agent.tools` is not set.
 * @param options `agentId`: the agent's class, `org/domain/env/name`.
 * @example
 * ```ts
 * import { declaredNames } from "./declared_names.ts";
 * declaredNames({ model: "openai:gpt-4o", tools: ["read_file"] }, []).models; // Set { "openai:gpt-4o", "gpt-4o" }
 * ```
 */
export function declaredNames(
  agent: { model: string; tools?: string[] },
  defaults: readonly string[],
  options: { agentId?: string } = {},
): DeclaredNames {
  const model = agent.model;
  const bare = model.includes(":") ? model.slice(model.indexOf(":") + 1) : model;
  return {
    tools: new Set(agent.tools ?? defaults),
    models: new Set([model, bare].filter((m) => m !== "")),
    ...(options.agentId ? { agents: new Set([options.agentId]) } : {}),
  };
}

/**
 * A label and a short hash of a value: what goes out instead of a value the run did not declare.
 *
 * @example
 * ```ts
 * import { hashedName } from "./declared_names.ts";
 * hashedName("tool", "ZXhmaWx0cmF0ZWQ="); // "tool:…" (12 hex digits)
 * ```
 */
export function hashedName(label: string, value: string): string {
  return `${label}:${createHash("sha256").update(value).digest("hex").slice(0, 12)}`;
}

/**
 * The value a destination below `bodies` receives for an attribute whose value was chosen by the model or a
 * tool: the value when the run declared it, else its label and a short hash. Other attributes pass unchanged.
 *
 * @param key The attribute's name.
 * @param value Its value.
 * @param declared What the run declared.
 * @example
 * ```ts
 * import { declaredValue } from "./declared_names.ts";
 * const declared = { tools: new Set(["read_file"]), models: new Set(["gpt-4o"]) };
 * declaredValue("gen_ai.tool.name", "read_file", declared); // "read_file"
 * declaredValue("gen_ai.tool.name", "c2VjcmV0", declared); // "tool:…"
 * ```
 */
export function declaredValue(key: string, value: unknown, declared: DeclaredNames): unknown {
  const label = CHOSEN_ATTRIBUTES[key];
  if (label === undefined || typeof value !== "string") return value;
  const ok = label === "tool"
    ? declared.tools.has(value)
    : label === "model"
    ? declared.models.has(value)
    : label === "error"
    ? KNOWN_ERROR_NAMES.includes(value)
    : false;
  return ok ? value : hashedName(label, value);
}

/**
 * A span's name below `bodies`: `execute_tool <tool>` and `chat <model>` keep their tool or model only when
 * the run declared it.
 *
 * @example
 * ```ts
 * import { declaredSpanName } from "./declared_names.ts";
 * declaredSpanName("execute_tool ZGF0YQ", { tools: new Set(), models: new Set() }); // "execute_tool tool:…"
 * ```
 */
export function declaredSpanName(name: string, declared: DeclaredNames): string {
  const m = /^(execute_tool|chat|text_completion|generate_content) (.+)$/.exec(name);
  if (!m) return name;
  const key = m[1] === "execute_tool" ? "gen_ai.tool.name" : "gen_ai.request.model";
  return `${m[1]} ${declaredValue(key, m[2]!, declared)}`;
}
