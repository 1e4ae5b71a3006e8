/**
 * The `codex` backend: Codex (`codex exec`) as a run. provr writes its config into the run's config home
 * (`CODEX_HOME=<run>/.codex/config.toml`): the model provider (the Responses API at `agent.provider.base_url`),
 * command hooks for each hook event that send the hook's input to provr with `curl` (the blocking `PreToolUse`
 * one asks the broker; Codex has no HTTP hook type), its traces to the run's receiver (`[otel]`, OTLP/HTTP
 * protobuf), analytics, feedback, update checks and the hosted web search off. Codex runs hooks from a config
 * file only once trusted; provr wrote them itself, so it passes `--dangerously-bypass-hook-trust`.
 *
 * The config home is `.codex` in the run folder, Codex's working folder, because Codex's own sandbox
 * (`workspace-write`) keeps a writable root's top-level `.codex` read-only to the commands it runs: a command
 * cannot drop the hooks. The files that could carry hooks are also hashed when Codex starts and checked at each
 * blocking hook and at the end (`ProgramLaunch.guarded`), for whatever writes them outside that sandbox.
 * @module
 */
import { join } from "node:path";
import { parseRoute, routeKeyName } from "./models.ts";
import { ProgramBackend, type ProgramLaunch, type ProgramSetup } from "./program_backend.ts";
import { curlHookCommand, hookHeaderFile } from "./_program_hooks.ts";
import { basePath, codexSteps, codexTokens, exists, jsonlFiles, readProgramFile } from "./_program_files.ts";

/** Codex's hook events that provr listens to; `PreToolUse` is the blocking one. */
export const CODEX_HOOK_EVENTS: readonly string[] = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "Stop",
];

/** Files by which an administrator configures Codex for every user; a run cannot switch them off. */
const MANAGED = ["/etc/codex/requirements.toml", "/etc/codex/managed_config.toml", "/etc/codex/config.toml"];

const toml = (s: string) => JSON.stringify(s);

/**
 * Codex's config home in the run folder: a top-level `.codex` of a writable root is read-only to the commands
 * Codex's `workspace-write` sandbox runs, so none of them can rewrite its hooks.
 */
const CODEX_HOME = ".codex";

/**
 * The files of Codex's config home that carry hooks or decide them (its config, a `hooks.json`, the requirements
 * and managed layers, and the hook commands' headers), held as provr left them for the whole run.
 */
const HOOK_FILES = ["config.toml", "hooks.json", "requirements.toml", "managed_config.toml", "hook-headers"];

/**
 * The Codex backend.
 *
 * @example
 * ```ts
 * import { CodexBackend } from "./codex.ts";
 * // runFile picks it for `agent.backend: codex`
 * const backend = new CodexBackend();
 * ```
 */
export class CodexBackend extends ProgramBackend {
  readonly name = "codex";
  protected readonly component = "CodexBackend";
  protected readonly defaultProgram = "codex";
  protected override readonly homeFolder = CODEX_HOME;

  protected async prepare(setup: ProgramSetup, program: string): Promise<ProgramLaunch> {
    const { job, home, env } = setup;
    const agent = job.agent;
    const route = parseRoute(agent);
    if (route.provider !== "openai" && route.provider !== "openai-compatible") {
      throw new RangeError(`the codex backend takes an openai: model, not ${agent.model}`);
    }
    const keyName = routeKeyName(agent);
    const key = keyName === null ? undefined : env(keyName);
    // it holds the run's span key and hook address: the user's only
    await Deno.writeTextFile(
      join(home, "config.toml"),
      codexConfig(setup, {
        model: route.model,
        hook: await curlHookCommand(setup.hook, hookHeaderFile(home)),
      }),
      { mode: 0o600 },
    );
    const last = join(home, "last-message.txt");
    const args = [
      "exec",
      "--skip-git-repo-check",
      "--dangerously-bypass-hook-trust",
      "--color",
      "never",
      "--output-last-message",
      last,
      ...(agent.instructions ? ["-c", `developer_instructions=${toml(agent.instructions)}`] : []),
      setup.prompt,
    ];
    const sessions = async () => await jsonlFiles(join(home, "sessions"));
    return {
      command: program,
      args,
      env: {
        PATH: basePath(env),
        HOME: home,
        CODEX_HOME: home,
        TRACEPARENT: setup.traceparent,
        ...(key ? { PROVRUN_CODEX_KEY: key } : {}),
      },
      problems: MANAGED.filter(exists).map((f) =>
        `${f} exists: Codex reads an administrator's managed config, which may send telemetry or set hooks ` +
        `that a run cannot switch off; remove it on machines that run agents under provr`
      ),
      facts: CODEX_FACTS,
      // the program may leave anything at the path: a FIFO held provr for ever
      answer: async () => {
        const bytes = await readProgramFile(last, job.ctx.folder);
        return bytes === null ? null : new TextDecoder().decode(bytes).trim() || null;
      },
      tokens: async () => await codexTokens(await sessions()),
      steps: async () => await codexSteps(await sessions()),
      sessionFiles: async () => (await sessions()).map((p) => ["rollout", p]),
      guarded: HOOK_FILES.map((f) => join(home, f)),
    };
  }
}

/** What `sandbox_started` says of a Codex run: its hooks, how they reach provr, its sandbox and its gaps. */
const CODEX_FACTS: ProgramLaunch["facts"] = {
  hooks: { blocking: ["PreToolUse"], observing: CODEX_HOOK_EVENTS.filter((e) => e !== "PreToolUse") },
  hook_transport: "curl",
  sandbox: "codex workspace-write, network off",
  gaps: [
    "the model gateway records every request and response; the provider encrypts the reasoning in them",
    "tool output is cut at 64 KB in the rollout",
    "hosted tools have no hooks (web search is switched off)",
    "Codex's own sandbox lets a command write the run folder; the chain shows any change to the evidence",
    "Codex's sandbox keeps .codex, the config home that holds the hooks, read-only to its commands; " +
    "provr hashes the files that carry hooks as it wrote them, refuses a tool call once one differs and " +
    "fails the run (HooksChanged) when one differs at the end",
    "codex exec has no turn limit: limits.steps counts the model responses of its rollout and stops " +
    "Codex once it has had that many and the last asked for a tool; limits.tokens counts the " +
    "token_count events of its rollout; both are read every quarter second, so a run may pass either " +
    "by one model response before it is stopped",
  ],
};

/**
 * Codex's `config.toml`: the model provider (the Responses API at `agent.provider.base_url`, its key in
 * `PROVRUN_CODEX_KEY`), a command hook for each hook event, its traces to the run's receiver, and analytics,
 * feedback, history, update checks, web search and the sandbox's network off.
 */
function codexConfig(setup: ProgramSetup, { model, hook: command }: { model: string; hook: string }): string {
  const baseUrl = setup.job.agent.provider?.base_url ?? "https://api.openai.com/v1";
  // curl -f fails on an HTTP error, and exit 2 makes Codex block the call: the hook fails closed.
  const hook = `${command} || exit 2`;
  const hooks = CODEX_HOOK_EVENTS.map((e) =>
    [
      `[[hooks.${e}]]`,
      ...(e.includes("Tool") || e === "PermissionRequest" ? [`matcher = "*"`] : []),
      `[[hooks.${e}.hooks]]`,
      `type = "command"`,
      `command = ${toml(hook)}`,
      `timeout = 60`,
    ].join("\n")
  );
  return [
    `model = ${toml(model)}`,
    `model_provider = "provrun"`,
    `approval_policy = "never"`,
    `sandbox_mode = "workspace-write"`,
    `check_for_update_on_startup = false`,
    `web_search = "disabled"`,
    ``,
    `[features]`,
    `hooks = true`,
    ``,
    `[analytics]`,
    `enabled = false`,
    ``,
    `[feedback]`,
    `enabled = false`,
    ``,
    `[history]`,
    `persistence = "none"`,
    ``,
    `[sandbox_workspace_write]`,
    `network_access = false`,
    ``,
    `[model_providers.provrun]`,
    `name = "provrun"`,
    `base_url = ${toml(baseUrl)}`,
    `env_key = "PROVRUN_CODEX_KEY"`,
    `wire_api = "responses"`,
    ``,
    `[otel]`,
    `environment = "provrun"`,
    `log_user_prompt = false`,
    `exporter = "none"`,
    `metrics_exporter = "none"`,
    `trace_exporter = { otlp-http = { endpoint = ${
      toml(setup.spans.tracesUrl)
    }, protocol = "binary", headers = { ${
      Object.entries(setup.spans.headers).map(([k, v]) => `${toml(k)} = ${toml(v)}`).join(", ")
    } } } }`,
    ``,
    ...hooks,
    ``,
  ].join("\n");
}
