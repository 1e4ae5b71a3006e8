/**
 * The `agent` backend: an AI SDK tool-calling loop (`generateText` or `streamText` with
 * `stopWhen: stepCountIs(limits.steps ?? 20)`) over the run's tools, every one of which runs in the sandbox
 * (or in an MCP server). The loop stays in the caller of record: each model request is written by the
 * capture (`model_called`), each tool call by its wrapper (`tool_called`), and the whole message history by
 * `trace_imported` (confidence `parsed`) just before `sandbox_completed`.
 *
 * Limits: `tokens` and `seconds` cancel the run (run_failed, `CancelledError`), as run.ts enforces them;
 * `steps` ends the loop, and the run completes with what it has: `sandbox_completed` says
 * `status: "step_limit"`; `tool_seconds` stops one tool call (its worker is terminated), which is that
 * tool's error, and the loop goes on.
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";
import { AI_TELEMETRY_OFF } from "../telemetry/run_telemetry.ts";
import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { generateText, type ModelMessage, stepCountIs, streamText, wrapLanguageModel } from "ai";
import type { Json } from "../../provevi/mod.ts";
import { toolContent } from "../../provevi/telemetry/mod.ts";
import { setSpanContent } from "../run/_span_content.ts";
import { type BackendJob, type BackendUpdate, InProcessBackend } from "./backend.ts";
import { callSettings } from "./call_backend.ts";
import { McpServers } from "../sandbox/mcp.ts";
import { errorMessage, errorName, type EvidenceRecorder } from "../run/recorder.ts";
import { Sandbox, sandboxFlags } from "../sandbox/sandbox.ts";
import {
  type AgentTool,
  agentTools,
  asJson,
  recordOutputCall,
  startToolStep,
  toolSet,
} from "../sandbox/tools.ts";
import { fileHashes, toolsFolderModules, toolsSnapshot } from "../sandbox/tools_folder.ts";

const COMPONENT = "AgentBackend";

/** The default of `agent.limits.steps`. */
export const DEFAULT_STEPS = 20;
/** The default of `agent.limits.tool_seconds`. */
export const DEFAULT_TOOL_SECONDS = 30;

/**
 * The agent backend.
 *
 * @example
 * ```ts
 * import { AgentBackend, RunFile, runFile } from "../mod.ts";
 * // runFile picks it for `agent.backend: agent`; passing it is the same:
 * // await runFile(file, { backend: new AgentBackend() });
 * const backend = new AgentBackend();
 * ```
 */
export class AgentBackend extends InProcessBackend {
  readonly name = "agent";

  /** Opens the sandbox and the MCP servers, runs the loop, records the history, closes them. */
  protected async work(
    job: BackendJob,
    signal: AbortSignal,
    emit: (u: BackendUpdate) => void,
  ): Promise<string> {
    const { recorder } = job.ctx;
    const agent = job.agent;
    const opened: Opened = { sandbox: null, mcp: null, tools: [] };
    try {
      await openTools(job, opened);
      const promptText = renderPrompt(job);
      const shown = [agent.instructions ? `[system]\n${agent.instructions}\n` : "", promptText].join("");
      await recorder.step("prompt_rendered", { component: COMPONENT }, async () => ({
        payload: await recorder.payload(shown),
        data: { chars: shown.length, files: job.inputs.map((i) => i.name) },
      }));
      const messages: ModelMessage[] = [{ role: "user", content: promptText }];
      const answers: string[] = [];
      const loop = await runLoop(job, { opened, messages, answers, signal, emit });
      signal.throwIfAborted();
      const text = answers.length ? answers.at(-1)! : loop.text;
      await writeAnswer(job, text);
      const steps = agent.limits?.steps ?? DEFAULT_STEPS;
      const last = loop.done.at(-1);
      const limited = !answers.length && loop.done.length >= steps && last?.finishReason === "tool-calls";
      await recordHistory(job, [...messages, ...loop.history], loop.done.length);
      // Every MCP server is stopped before the run ends, and how each ended is recorded (harden).
      const stopped = await opened.mcp?.close() ?? [];
      opened.mcp = null;
      await recorder.step("sandbox_completed", { component: COMPONENT }, () =>
        Promise.resolve({
          data: {
            status: limited ? "step_limit" : "ok",
            steps: loop.done.length,
            step_limit: steps,
            chars: text.length,
            workers_started: opened.sandbox?.stats.started ?? 0,
            workers_terminated: opened.sandbox?.stats.terminated ?? 0,
            mcp_stopped: stopped as unknown as Json,
          },
        }));
      return text;
    } finally {
      await opened.mcp?.close();
      await opened.sandbox?.close();
    }
  }
}

/** What an agent run opened for its tools: closed at its end, whatever happens. */
interface Opened {
  sandbox: Sandbox | null;
  mcp: McpServers | null;
  tools: AgentTool[];
}

/** The `sandbox_started` step: the sandbox, the MCP servers and the tools, and the facts of each. */
async function openTools(job: BackendJob, opened: Opened): Promise<void> {
  const agent = job.agent;
  const limits = agent.limits ?? {};
  await job.ctx.recorder.step(
    "sandbox_started",
    // opening the sandbox and the tools creates no agent at a provider, so it is not create_agent
    { component: COMPONENT, spanName: "provrun.sandbox" },
    async () => {
      const facts = job.servedTools ? await servedTools(job, opened) : await startTools(job, opened);
      return {
        data: {
          backend: "agent",
          model: agent.model,
          streamed: agent.stream ?? false,
          session_id: job.sessionId ?? null,
          tools: opened.tools as unknown as Json,
          ...facts,
          limits: {
            steps: limits.steps ?? DEFAULT_STEPS,
            tokens: limits.tokens ?? null,
            seconds: limits.seconds ?? null,
          },
          ...job.facts,
        },
      };
    },
  );
}

/** Starts the sandbox and the MCP servers; their facts for `sandbox_started`. */
async function startTools(job: BackendJob, opened: Opened): Promise<{ [key: string]: Json }> {
  const agent = job.agent;
  const toolSeconds = agent.limits?.tool_seconds ?? DEFAULT_TOOL_SECONDS;
  const modules = agent.tools_folder ? await toolsFolderModules(agent.tools_folder, job.folder) : [];
  const resultBytes = agent.limits?.tool_result_bytes;
  const sandbox = opened.sandbox = await Sandbox.open(job.ctx.folder, {
    net: agent.net ?? [],
    modules,
    toolSeconds,
    ...(resultBytes ? { resultBytes } : {}),
  });
  const mcp = opened.mcp = agent.mcp?.length
    ? await McpServers.open(agent.mcp, {
      permissions: sandbox.permissions,
      allowUnsandboxed: agent.allow_unsandboxed ?? [],
      folder: job.folder,
      taken: sandbox.tools.map((t) => t.name),
    })
    : null;
  opened.tools = agentTools(agent.tools, { sandbox, mcp });
  const servers = mcp?.servers ?? [];
  return {
    permissions: {
      worker: sandbox.permissions as unknown as Json,
      deno_mcp_flags: sandboxFlags(sandbox.permissions),
      tool_seconds: toolSeconds,
    },
    mcp: servers as unknown as Json,
    unsandboxed: servers.filter((s) => !s.sandboxed).map((s) => ({
      server: s.name,
      ...(s.url ? { url: s.url } : { command: s.command }),
      tools: s.tools,
    })),
    // The hashes of the tools folder's files as the sandbox loaded them, so a changed tools module shows.
    ...(agent.tools_folder ? { tools_files: sandbox.toolsFiles } : {}),
    // What the tools modules wrote as they loaded: kept in the record, never shown by provr.
    ...(sandbox.loadConsole ? { load_console: sandbox.loadConsole } : {}),
  };
}

/**
 * The tools as another run recorded them, served by the run's parts: no sandbox and no MCP server starts, and
 * no tools module is loaded; the tools folder's files are only hashed, so a changed module shows.
 */
async function servedTools(job: BackendJob, opened: Opened): Promise<{ [key: string]: Json }> {
  opened.tools = job.servedTools!.map((t) => ({ ...t }));
  const folder = job.agent.tools_folder;
  const files = folder
    ? await toolsSnapshot(isAbsolute(folder) ? folder : resolve(job.folder, folder))
    : null;
  return {
    served: true,
    permissions: null,
    mcp: [],
    unsandboxed: [],
    ...(files ? { tools_files: fileHashes(files) } : {}),
  };
}

/** What the loop ended with: the model's last text, the messages it added, and its steps. */
interface LoopEnd {
  text: string;
  history: ModelMessage[];
  done: { finishReason: string }[];
}

/** The AI SDK's tool-calling loop, streamed or not, up to `limits.steps`. */
async function runLoop(
  job: BackendJob,
  loop: {
    opened: Opened;
    messages: ModelMessage[];
    answers: string[];
    signal: AbortSignal;
    emit: (u: BackendUpdate) => void;
  },
): Promise<LoopEnd> {
  const { recorder } = job.ctx;
  const { agent } = job;
  const { opened, signal, emit } = loop;
  const outputTools = opened.tools.filter((t) => t.kind === "output");
  const model = withOutputCapture(job.model, outputTools, recorder, loop.answers);
  const set = toolSet(opened.tools, {
    recorder,
    component: COMPONENT,
    sandbox: opened.sandbox,
    mcp: opened.mcp,
    signal,
    wrapTool: job.wrapTool,
  });
  const common = {
    model,
    ...(agent.instructions ? { system: agent.instructions } : {}),
    messages: loop.messages,
    tools: set,
    stopWhen: stepCountIs(agent.limits?.steps ?? DEFAULT_STEPS),
    abortSignal: signal,
    maxRetries: 0,
    ...callSettings(agent.settings),
    telemetry: AI_TELEMETRY_OFF, // after the settings, so nothing turns the AI SDK's telemetry on
    // A call of a tool that does not exist, or with input that is not JSON, never reaches an `execute`:
    // the AI SDK answers the model with the error itself. It is still a tool call, so it is recorded.
    onStepEnd: async (step: { content: ReadonlyArray<{ type: string }> }) => {
      for (const part of step.content) {
        const call = part as InvalidCall;
        if (call.type === "tool-call" && call.invalid && !call.providerExecuted) {
          await recordInvalidCall(call, { recorder, component: COMPONENT });
        }
      }
    },
  };
  if (!(agent.stream ?? false)) {
    const result = await generateText(common);
    emit({ type: "text", text: result.text });
    return { text: result.text, history: result.responseMessages, done: result.steps };
  }
  const result = streamText(common);
  let failure: unknown = null;
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") emit({ type: "text", text: part.text });
    if (part.type === "error") failure = part.error;
  }
  if (failure) throw failure;
  signal.throwIfAborted();
  return { text: await result.text, history: await result.responseMessages, done: await result.steps };
}

/** The final answer goes to the first declared output, as the call backend's does, unless a tool wrote it. */
async function writeAnswer(job: BackendJob, text: string): Promise<void> {
  const first = job.outputs[0];
  if (first === undefined) return;
  const out = join(job.ctx.folder, "output", first);
  const exists = await Deno.lstat(out).then(() => true, () => false);
  if (!exists && text !== "") {
    await Deno.mkdir(join(out, ".."), { recursive: true });
    await Deno.writeTextFile(out, text, { createNew: true });
  }
}

/** The whole message history, as `trace_imported` (confidence `parsed`). */
async function recordHistory(job: BackendJob, all: ModelMessage[], steps: number): Promise<void> {
  const { recorder } = job.ctx;
  await recorder.step(
    "trace_imported",
    { component: COMPONENT, spanName: "provrun.import_trace" },
    async () => ({
      payload: await recorder.payload(
        { system: job.agent.instructions ?? null, messages: all } as unknown as Json,
      ),
      confidence: "parsed",
      data: { messages: all.length, steps, format: "ai-sdk/model-messages" },
    }),
  );
}

/** A tool call that the AI SDK refused, as it hands it to the model wrapper. */
interface InvalidCall {
  type: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  invalid?: boolean;
  error?: unknown;
  providerExecuted?: boolean;
}

/** Records a tool call that the AI SDK refused before any tool ran: no such tool, or input not JSON. */
function recordInvalidCall(
  call: InvalidCall,
  options: { recorder: EvidenceRecorder; component: string },
): Promise<unknown> {
  const { recorder } = options;
  return recorder.atTop(async () => {
    const step = startToolStep(recorder, {
      component: options.component,
      name: call.toolName,
      callId: call.toolCallId,
    });
    const sha = await recorder.payload(asJson(call.input));
    if (sha) step.span.setAttribute("provrun.tool.call.arguments_ref", sha);
    setSpanContent(step.span, () => toolContent(asJson(call.input), undefined));
    step.span.setStatus({ code: 2, message: errorName(call.error) });
    step.span.setAttribute("error.type", errorName(call.error));
    return await step.end("tool_called", {
      payload: sha,
      data: {
        tool: call.toolName,
        call_id: call.toolCallId,
        error: errorName(call.error),
        message: errorMessage(call.error),
        result_payload: null,
        executed_by: "none",
        sandboxed: true,
      },
    });
  });
}

/** The user message: the prompt, and where the run's files are in the agent's view. */
function renderPrompt(job: BackendJob): string {
  const lines = [job.prompt, ""];
  if (job.inputs.length) {
    lines.push("The run's inputs, read-only:");
    for (const i of job.inputs) lines.push(`- /input/${i.name} (${i.kind})`);
  }
  lines.push(
    job.outputs.length
      ? `Write your results under /output: ${job.outputs.map((o) => `/output/${o}`).join(", ")}.`
      : "Write any results under /output.",
  );
  return lines.join("\n");
}

/**
 * Wraps the (captured) model so that an output tool's call is recorded as it arrives: in a stream, before the
 * stream ends (and so before its `model_called`); else just after the reply.
 */
function withOutputCapture(
  model: LanguageModelV4,
  outputTools: AgentTool[],
  recorder: EvidenceRecorder,
  answers: string[],
): LanguageModelV4 {
  if (!outputTools.length) return model;
  const byName = new Map(outputTools.map((t) => [t.name, t]));
  const record = async (call: { toolName: string; toolCallId: string; input: string }) => {
    const t = byName.get(call.toolName);
    if (!t) return;
    const args = await recordOutputCall(t, call, { recorder, component: COMPONENT });
    const answer = (args as { answer?: unknown } | null)?.answer;
    answers.push(typeof answer === "string" ? answer : JSON.stringify(args));
  };
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: "v4",
      wrapGenerate: async ({ doGenerate }) => {
        const result = await doGenerate();
        for (const c of result.content) if (c.type === "tool-call" && !c.providerExecuted) await record(c);
        return result;
      },
      wrapStream: async ({ doStream }) => {
        const result = await doStream();
        const reader = result.stream.getReader();
        // A pull stream, not a transform: the part is recorded before the next one is read, so the capture
        // below sees the end of the stream (and writes model_called) only after this event.
        const stream = new ReadableStream<LanguageModelV4StreamPart>({
          pull: async (controller) => {
            let next;
            try {
              next = await reader.read();
            } catch (error) {
              controller.error(error);
              return;
            }
            if (next.done) return controller.close();
            const part = next.value;
            if (part.type === "tool-call" && !part.providerExecuted) await record(part);
            controller.enqueue(part);
          },
          cancel: (reason) => reader.cancel(reason),
        });
        return { ...result, stream };
      },
    },
  });
}
