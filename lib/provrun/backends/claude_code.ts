/**
 * The `claude-code` backend: Claude Code (`claude -p`) as a run. provr writes its user settings into the run's
 * config home (`CLAUDE_CONFIG_DIR=<run>/agent`): HTTP hooks for every hook event, the blocking `PreToolUse` one
 * asking the broker; transcripts kept (`cleanupPeriodDays`). Its spans (the beta traces) go to the run's
 * receiver over OTLP/HTTP protobuf with `TRACEPARENT` set; metrics, logs, error reports, usage reporting and
 * update checks are switched off by their variables. With `agent.raw_bodies: true`, its full model requests
 * and responses (`OTEL_LOG_RAW_API_BODIES=file:<dir>`) are kept as payloads.
 * @module
 */
import { join } from "node:path";
import { parseRoute, routeKeyName } from "./models.ts";
import { ProgramBackend, type ProgramLaunch, type ProgramSetup } from "./program_backend.ts";
import { curlHookCommand, hookHeaderFile } from "./_program_hooks.ts";
import { basePath, claudeTokens, exists, jsonlFiles, otlpHeaders } from "./_program_files.ts";

/** Claude Code's hook events that provr listens to; `PreToolUse` is the blocking one. */
export const CLAUDE_HOOK_EVENTS: readonly string[] = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionDenied",
  "Notification",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "Stop",
  "SessionEnd",
];

/** The events whose hooks are commands (curl), not HTTP. */
const SESSION_EVENTS = ["SessionStart", "SessionEnd"];

/** Files by which an administrator configures Claude Code for every user; a run cannot switch them off. */
const MANAGED = ["/etc/claude-code/managed-settings.json", "/etc/claude-code/managed-mcp.json"];

/**
 * The Claude Code backend.
 *
 * @example
 * ```ts
 * import { ClaudeCodeBackend } from "./claude_code.ts";
 * // runFile picks it for `agent.backend: claude-code`
 * const backend = new ClaudeCodeBackend();
 * ```
 */
export class ClaudeCodeBackend extends ProgramBackend {
  readonly name = "claude-code";
  protected readonly component = "ClaudeCodeBackend";
  protected readonly defaultProgram = "claude";

  protected async prepare(setup: ProgramSetup, program: string): Promise<ProgramLaunch> {
    const { job, home } = setup;
    const agent = job.agent;
    const route = parseRoute(agent);
    if (route.provider !== "anthropic") {
      throw new RangeError(`the claude-code backend takes an anthropic: model, not ${agent.model}`);
    }
    await writeSettings(home, setup.hook);
    const rawDir = join(home, "raw-bodies");
    if (agent.raw_bodies) await Deno.mkdir(rawDir, { recursive: true });
    const args = [
      "-p",
      setup.prompt,
      "--output-format",
      "json",
      "--model",
      route.model,
      "--setting-sources",
      "user",
      "--strict-mcp-config",
      ...(agent.limits?.steps ? ["--max-turns", String(agent.limits.steps)] : []),
      ...(agent.instructions ? ["--append-system-prompt", agent.instructions] : []),
    ];
    return {
      command: program,
      args,
      env: claudeVariables(setup, rawDir),
      problems: MANAGED.filter(exists).map((f) =>
        `${f} exists: Claude Code reads an administrator's managed settings, which may send telemetry or set ` +
        `hooks that a run cannot switch off; remove it on machines that run agents under provr`
      ),
      facts: claudeFacts(agent.raw_bodies ?? false),
      answer: (stdout) => Promise.resolve(lastResult(stdout)),
      atTurnLimit: (stdout) => lastJson(stdout)?.subtype === "error_max_turns",
      tokens: async () => await claudeTokens(await jsonlFiles(join(home, "projects"))),
      sessionFiles: () => sessionFiles(home, agent.raw_bodies ? rawDir : null),
    };
  }
}

/**
 * Writes Claude Code's user settings: an HTTP hook for each hook event (Claude Code calls it itself; the
 * session's start and end take command hooks only, so `curl`), and transcripts kept.
 */
async function writeSettings(home: string, listener: ProgramSetup["hook"]): Promise<void> {
  const command = await curlHookCommand(listener, hookHeaderFile(home));
  const hook = (event: string) =>
    SESSION_EVENTS.includes(event)
      ? { type: "command", command, timeout: 60 }
      : { type: "http", url: listener.url, headers: { ...listener.headers }, timeout: 60 };
  const settings = {
    hooks: Object.fromEntries(
      CLAUDE_HOOK_EVENTS.map((
        e,
      ) => [e, [{ ...(e.includes("ToolUse") ? { matcher: "*" } : {}), hooks: [hook(e)] }]]),
    ),
    allowedHttpHookUrls: [`http://127.0.0.1:${new URL(listener.url).port}/*`],
    cleanupPeriodDays: 100000,
    includeCoAuthoredBy: false,
  };
  await Deno.writeTextFile(join(home, "settings.json"), JSON.stringify(settings, null, 2), { mode: 0o600 });
}

/** Claude Code's whole environment: its traces to the run's receiver, everything else of its own off. */
function claudeVariables(setup: ProgramSetup, rawDir: string): Record<string, string> {
  const { job, home, spans, env } = setup;
  const agent = job.agent;
  const keyName = routeKeyName(agent);
  const key = keyName === null ? undefined : env(keyName);
  return {
    PATH: basePath(env),
    HOME: home,
    CLAUDE_CONFIG_DIR: home,
    TRACEPARENT: setup.traceparent,
    // the caller of record's receiver, and nothing else
    CLAUDE_CODE_ENABLE_TELEMETRY: "1",
    CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: "1",
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_METRICS_EXPORTER: "none",
    OTEL_LOGS_EXPORTER: "none",
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    OTEL_EXPORTER_OTLP_ENDPOINT: spans.url,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: spans.tracesUrl,
    // the run's key, in a header: a URL would carry it into logs and the record
    OTEL_EXPORTER_OTLP_HEADERS: otlpHeaders(spans.headers),
    OTEL_BSP_SCHEDULE_DELAY: "200",
    OTEL_TRACES_EXPORT_INTERVAL: "200",
    OTEL_LOG_USER_PROMPTS: "0",
    OTEL_LOG_TOOL_DETAILS: "0",
    // no usage reporting, error reports, update checks or other traffic of its own
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_BUG_COMMAND: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: "1",
    ...(agent.raw_bodies ? { OTEL_LOG_RAW_API_BODIES: `file:${rawDir}` } : {}),
    ...(agent.provider?.base_url ? { ANTHROPIC_BASE_URL: agent.provider.base_url } : {}),
    ...(key ? { ANTHROPIC_API_KEY: key } : {}),
  };
}

/** What `sandbox_started` says of a Claude Code run: its hooks, how they reach provr, and its gaps. */
function claudeFacts(rawBodies: boolean): ProgramLaunch["facts"] {
  return {
    hooks: { blocking: ["PreToolUse"], observing: CLAUDE_HOOK_EVENTS.filter((e) => e !== "PreToolUse") },
    hook_transport: {
      http: CLAUDE_HOOK_EVENTS.filter((e) => !SESSION_EVENTS.includes(e)),
      curl: SESSION_EVENTS,
    },
    raw_bodies: rawBodies,
    gaps: [
      "thinking text is removed from the raw request and response bodies",
      "a tool call runs outside Deno's sandbox once PreToolUse allows it; Bash is refused unless " +
      "agent.allow_unsandboxed lists it",
      "limits.steps is --max-turns (at it, the run ends with what Claude Code wrote); limits.tokens counts the usage in its transcript, read every " +
      "quarter second, so a run may pass it by one model response before it is stopped",
    ],
  };
}

/** The last line of Claude Code's JSON output, or null when it is not JSON. */
function lastJson(stdout: string): Record<string, unknown> | null {
  try {
    return JSON.parse(stdout.trim().split("\n").pop() ?? "{}");
  } catch {
    return null;
  }
}

/** The final answer: the `result` of the last JSON line, or the whole output when it is not JSON. */
function lastResult(stdout: string): string | null {
  const last = lastJson(stdout);
  if (last === null) return stdout.trim() || null;
  return typeof last.result === "string" ? last.result : null;
}

/** The transcripts, and the raw model bodies when they were kept (`raw_api_body` files last, by name). */
async function sessionFiles(home: string, rawDir: string | null): Promise<[string, string][]> {
  const files: [string, string][] = (await jsonlFiles(join(home, "projects"))).map((
    p,
  ) => ["transcript", p]);
  if (rawDir !== null) {
    for await (const e of Deno.readDir(rawDir)) {
      if (e.isFile) files.push(["raw_api_body", join(rawDir, e.name)]);
    }
    files.sort((a, b) => (a[0] === b[0] ? a[1].localeCompare(b[1]) : a[0] < b[0] ? 1 : -1));
  }
  return files;
}
