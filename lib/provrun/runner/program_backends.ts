/**
 * Where `runFile` picks an agent-program backend (`claude-code`, `codex`): the program makes its own model
 * calls, so the run gives it no model of provr's (a model that refuses to be called).
 * @module
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { Backend } from "../backends/backend.ts";
import type { AgentSpec } from "../run/run_file.ts";

/**
 * The backend of an agent program, or null for `call` and `agent`. The programs' backends (and the process,
 * hook and session machinery under them) are imported here, when a run names one: a `call` or `agent` run,
 * provr's common path, never loads them (#25).
 *
 * @param agent The run file's agent section.
 * @param env Reads provr's variables (the API key); `Deno.env` by default.
 * @returns The backend.
 */
export async function programBackend(
  agent: Pick<AgentSpec, "backend">,
  env?: (name: string) => string | undefined,
): Promise<Backend | null> {
  const backend = agent.backend === "claude-code"
    ? new (await import("../backends/claude_code.ts")).ClaudeCodeBackend()
    : agent.backend === "codex"
    ? new (await import("../backends/codex.ts")).CodexBackend()
    : null;
  if (backend && env) backend.env = env;
  return backend;
}

const refuse = (): never => {
  throw new TypeError("an agent program's run has no model of provr's to call");
};

/** The model of a run whose program makes its own calls: calling it is a programming error. */
export const UNCALLED_MODEL: LanguageModelV4 = {
  specificationVersion: "v4",
  provider: "agent-program",
  modelId: "none",
  supportedUrls: {},
  doGenerate: refuse,
  doStream: refuse,
} as unknown as LanguageModelV4;
