/**
 * The agent's tools as the AI SDK sees them, each wrapped so that its call is recorded: one `execute_tool
 * <name>` span and one `tool_called` event with the arguments (payload) and the result
 * (`data.result_payload`) stored by hash, the error by name when it failed (`NotCapable` when Deno's
 * permissions stopped it), and where it ran (`executed_by`). A failed call is the tool's error, given back to
 * the model; the run goes on. Output tools (`final_answer`) have no `execute`: the model's call is the answer,
 * recorded as it arrives.
 * @module
 */
import { jsonSchema, type Tool, tool, type ToolSet } from "ai";
import type { Ajv } from "ajv";
import type { Json } from "../../provevi/mod.ts";
import { capJson, toolContent } from "../../provevi/telemetry/mod.ts";
import { setSpanContent } from "../run/_span_content.ts";
import { ToolNotServed, ToolSetError } from "../run/errors.ts";
import { FS_TOOLS, type JsonSchema } from "./fs_tools.ts";
import type { McpServers } from "./mcp.ts";
import { errorMessage, errorName, type EvidenceRecorder, type OpenStep } from "../run/recorder.ts";
import type { Sandbox } from "./sandbox.ts";
import type { ToolReturn, ToolWrap } from "../run/run_part.ts";

/** A tool as `sandbox_started` records it: its full definition, and where it runs. */
export interface AgentTool {
  name: string;
  description: string;
  input_schema: JsonSchema;
  /** `builtin`, `folder` (the tools folder), `mcp`, or `output`. */
  kind: "builtin" | "folder" | "mcp" | "output";
  /** `sandbox`, `mcp:<server>`, or `output` (not executed; the call is the answer). */
  executed_by: string;
  /** True when Deno's sandbox holds the tool's code. */
  sandboxed: boolean;
  /**
   * True when the tool declares that running it twice with the same arguments has the effect of running it once:
   * a resumed run may run again a call of it that was requested and whose result was not recorded.
   */
  idempotent?: boolean;
}

/** The output tool: the model gives its final answer by calling it, which ends the loop. */
export const FINAL_ANSWER: Omit<AgentTool, "executed_by" | "sandboxed" | "kind"> = {
  name: "final_answer",
  description: "Give the final answer and end the run.",
  input_schema: {
    type: "object",
    properties: { answer: { type: "string" } },
    required: ["answer"],
    additionalProperties: false,
  },
};

/** The built-in tools a run gets when `agent.tools` is not set. */
export const DEFAULT_TOOLS: readonly string[] = [
  "read_file",
  "list_files",
  "grep_file",
  "write_file",
  "note",
];

/** What a tool's name may be, as the sandbox's worker checks it for tools folders. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The names `agent.tools` may use. */
export const BUILTIN_NAMES: readonly string[] = [...FS_TOOLS.map((t) => t.name), FINAL_ANSWER.name];

/**
 * The tools of a run: the built-ins that `agent.tools` names (the five filesystem tools by default), every
 * tool of the tools folder and of the MCP servers.
 *
 * @param selected `agent.tools`.
 * @param sources The sandbox (built-ins and tools folder) and the MCP servers.
 * @throws ToolSetError for a name that is no built-in tool.
 * @example
 * ```ts ignore
 * const tools = agentTools(["read_file", "final_answer"], { sandbox, mcp });
 * ```
 */
export function agentTools(
  selected: string[] | undefined,
  sources: { sandbox: Sandbox; mcp: McpServers | null },
): AgentTool[] {
  const wanted = selected ?? [...DEFAULT_TOOLS];
  for (const name of wanted) {
    if (!BUILTIN_NAMES.includes(name)) {
      throw new ToolSetError(
        `agent.tools names "${name}", which is no built-in tool; the built-ins are ${
          BUILTIN_NAMES.join(", ")
        } ` +
          `(tools of a tools folder or an MCP server are offered without being named)`,
      );
    }
  }
  const builtins = new Set(FS_TOOLS.map((t) => t.name));
  const out: AgentTool[] = [];
  for (const def of sources.sandbox.tools) {
    const builtin = builtins.has(def.name);
    if (builtin && !wanted.includes(def.name)) continue;
    out.push({ ...def, kind: builtin ? "builtin" : "folder", executed_by: "sandbox", sandboxed: true });
  }
  for (const t of sources.mcp?.tools ?? []) {
    out.push({ ...t.definition, kind: "mcp", executed_by: `mcp:${t.server}`, sandboxed: t.sandboxed });
  }
  if (wanted.includes(FINAL_ANSWER.name)) {
    out.push({ ...FINAL_ANSWER, kind: "output", executed_by: "output", sandboxed: true });
  }
  // The model calls a tool by its name, so two tools of one name would make the record say one ran while
  // another did (a tools folder's `final_answer` beside the output tool, an MCP server's odd names).
  const seen = new Map<string, string>();
  for (const t of out) {
    if (!TOOL_NAME.test(t.name)) {
      throw new ToolSetError(
        `the tool "${t.name}" (${t.executed_by}) has a name that is not 1 to 64 letters, digits, _, . or -; rename it`,
      );
    }
    const other = seen.get(t.name);
    if (other !== undefined) {
      throw new ToolSetError(
        `two tools are named "${t.name}" (${other} and ${t.executed_by}); rename one`,
      );
    }
    seen.set(t.name, t.executed_by);
  }
  return out;
}

/** Options of {@linkcode toolSet}. */
export interface ToolSetOptions {
  recorder: EvidenceRecorder;
  /** The class named as each event's component. */
  component: string;
  /** The sandbox, or null when the run serves its tools from another run's evidence and runs none. */
  sandbox: Sandbox | null;
  mcp: McpServers | null;
  /** The run's signal: a cancel stops the tool calls in flight. */
  signal: AbortSignal;
  /** The run's parts' hook around each call, inside its recorded step. */
  wrapTool?: ToolWrap | undefined;
}

let validator: Promise<Ajv> | undefined;
/** The JSON schema validator, imported at the first tool call: a run without tools never pays for it. */
function ajv(): Promise<Ajv> {
  validator ??= import("ajv").then(({ Ajv }) => new Ajv({ strict: false, allErrors: false }));
  return validator;
}

type SchemaCheck = ((value: unknown) => boolean) & { errors?: unknown };

/**
 * Checks a call's arguments against the tool's JSON schema before anything runs, so that a tool never gets
 * arguments its schema refuses. A refused call reaches no `execute`; the AI SDK answers the model with the error,
 * and the agent backend records it as a call that nothing executed. A schema that the validator cannot read is
 * not checked here (the tool's own checks remain). The schema is compiled at the tool's first call.
 */
function validatorOf(
  t: AgentTool,
): (value: unknown) => Promise<{ success: true; value: unknown } | { success: false; error: Error }> {
  let compiled: Promise<{ validator: Ajv; check: SchemaCheck | null }> | undefined;
  return async (value) => {
    compiled ??= ajv().then((validator) => {
      try {
        return { validator, check: validator.compile(t.input_schema as object) as SchemaCheck };
      } catch {
        return { validator, check: null };
      }
    });
    const { validator, check } = await compiled;
    if (!check || check(value)) return { success: true, value };
    return {
      success: false,
      error: new TypeError(
        `arguments of ${t.name} do not match its schema: ${validator.errorsText(check.errors as never)}`,
      ),
    };
  };
}

/**
 * The AI SDK tool set of a run's tools, each call recorded.
 *
 * @param tools The tools, from {@linkcode agentTools}.
 * @param options The recorder, the sandbox, the MCP servers.
 * @example
 * ```ts ignore
 * const tools = toolSet(agentTools(undefined, { sandbox, mcp: null }), { recorder, component, sandbox, mcp: null, signal });
 * await generateText({ model, tools, prompt: "…" });
 * ```
 */
export function toolSet(tools: AgentTool[], options: ToolSetOptions): ToolSet {
  const set: ToolSet = {};
  for (const t of tools) {
    const base = {
      description: t.description,
      inputSchema: jsonSchema(t.input_schema as never, { validate: validatorOf(t) }),
    };
    if (t.kind === "output") {
      set[t.name] = tool(base) as Tool;
      continue;
    }
    set[t.name] = tool({
      ...base,
      execute: (args: unknown, { toolCallId, abortSignal }) =>
        callRecorded(t, args, { ...options, callId: toolCallId, signal: abortSignal ?? options.signal }),
    }) as Tool;
  }
  return set;
}

/**
 * Starts the `execute_tool <name>` step of one tool call, at the top of the run (not inside the model call
 * whose stream may run the tool).
 *
 * @param recorder The run's recorder.
 * @param call The component, the tool's name, the call's ID, and the tool's type (none for a call the AI SDK
 * refused before any tool was chosen).
 * @returns The open step.
 * @example
 * ```ts ignore
 * const step = startToolStep(recorder, { component: "AgentBackend", name: "read_file", callId: "c1", type: "function" });
 * await step.end("tool_called", { data: { tool: "read_file" } });
 * ```
 */
export function startToolStep(
  recorder: EvidenceRecorder,
  call: {
    component: string;
    name: string;
    callId: string;
    type?: "function" | "extension";
    /** The tool's description, as the model was given it. */
    description?: string;
  },
): OpenStep {
  return recorder.startStep({
    component: call.component,
    spanName: `execute_tool ${call.name}`,
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": call.name,
      "gen_ai.tool.call.id": call.callId,
      ...(call.type ? { "gen_ai.tool.type": call.type } : {}),
      ...(call.description ? { "gen_ai.tool.description": call.description } : {}),
    },
  });
}

function callRecorded(
  t: AgentTool,
  args: unknown,
  options: ToolSetOptions & { callId: string },
): Promise<unknown> {
  const { recorder, callId, signal } = options;
  return recorder.atTop(async () => {
    const step = startToolStep(recorder, {
      component: options.component,
      name: t.name,
      callId,
      type: t.kind === "mcp" ? "extension" : "function",
      description: t.description,
    });
    const argsSha = await recorder.payload(asJson(args));
    if (argsSha) step.span.setAttribute("provrun.tool.call.arguments_ref", argsSha);
    setSpanContent(step.span, () => toolContent(args as Json, undefined));
    let result: unknown = null;
    let failure: unknown = null;
    let console = "";
    let servedFrom: ToolReturn["served"] | null = null;
    try {
      signal.throwIfAborted();
      const run = (): Promise<ToolReturn> => runTool(t, args, { ...options, callId, signal });
      let served: ToolReturn["served"];
      ({ value: result, console, served } = await (options.wrapTool?.({ tool: t.name, callId, args }, run) ??
        run()));
      if (served) step.span.setAttribute("provrun.served_from", `${served.run_id}#${served.seq}`);
      servedFrom = served ?? null;
      if (t.name === "note" && t.kind === "builtin") {
        // The note's event carries the span of the tool call that made it.
        await recorder.record({
          type: "note_added",
          component: "agent",
          data: {
            text: (result as { text: string }).text,
            citations: (result as { citations?: Json }).citations ?? [],
            call_id: callId,
          },
        }, step.span);
      }
    } catch (error) {
      failure = error;
      const said = (error as { console?: unknown })?.console;
      if (typeof said === "string") console = said;
      const served = (error as { served?: ToolReturn["served"] })?.served;
      if (served) servedFrom = served;
    }
    const resultSha = failure === null ? await recorder.payload(asJson(result)) : null;
    if (resultSha) step.span.setAttribute("provrun.tool.call.result_ref", resultSha);
    if (failure === null) {
      setSpanContent(step.span, () => ({
        "gen_ai.tool.call.result": capJson(JSON.parse(asJson(result)) as Json).text,
      }));
    }
    if (failure !== null) {
      step.span.setStatus({ code: 2, message: errorName(failure) });
      step.span.setAttribute("error.type", errorName(failure));
    }
    await step.end("tool_called", {
      payload: argsSha,
      data: {
        tool: t.name,
        call_id: callId,
        error: failure === null ? null : errorName(failure),
        ...(failure === null ? {} : { message: errorMessage(failure) }),
        result_payload: resultSha,
        executed_by: t.executed_by,
        sandboxed: t.sandboxed,
        // What the tool wrote to its console, as JSON text in the record, never to provr's own output.
        ...(console ? { console } : {}),
        ...(servedFrom ? { served_from: { ...servedFrom } } : {}),
      },
    });
    if (failure !== null) throw failure;
    return result;
  });
}

/** Runs one call of a tool where it lives: its MCP server, or the sandbox. */
async function runTool(
  t: AgentTool,
  args: unknown,
  options: ToolSetOptions & { callId: string },
): Promise<ToolReturn> {
  const { sandbox, mcp, signal, callId } = options;
  if (t.kind === "mcp" && mcp) {
    return { value: await mcp.call(t.name, args, { signal, seconds: sandbox?.toolSeconds }), console: "" };
  }
  if (t.kind !== "mcp" && sandbox) return await sandbox.callWithConsole(t.name, args, { callId, signal });
  throw new ToolNotServed(t.name, callId);
}

/**
 * A value as its JSON text, so that every tool payload is JSON (a text result is a JSON string, not raw
 * text).
 */
export function asJson(value: unknown): string {
  return JSON.stringify(value ?? null) ?? "null";
}

/**
 * Records an output tool's call as it arrives in the model's reply: it runs nowhere, so its result is its
 * arguments. In a streamed run this comes before the `model_called` that asked for it, since the call
 * arrives before the stream ends.
 *
 * @param t The output tool.
 * @param call The call's ID and its arguments as JSON text.
 * @param options The recorder and the component.
 */
export function recordOutputCall(
  t: AgentTool,
  call: { toolCallId: string; input: string },
  options: { recorder: EvidenceRecorder; component: string },
): Promise<unknown> {
  const { recorder } = options;
  return recorder.atTop(async () => {
    const step = startToolStep(recorder, {
      component: options.component,
      name: t.name,
      callId: call.toolCallId,
      type: "function",
      description: t.description,
    });
    let args: Json;
    try {
      args = JSON.parse(call.input || "{}");
    } catch {
      args = call.input;
    }
    const sha = await recorder.payload(asJson(args));
    if (sha) {
      step.span.setAttribute("provrun.tool.call.arguments_ref", sha);
      step.span.setAttribute("provrun.tool.call.result_ref", sha);
    }
    // an output tool runs nowhere: its result is its arguments
    setSpanContent(step.span, () => toolContent(args, args));
    await step.end("tool_called", {
      payload: sha,
      data: {
        tool: t.name,
        call_id: call.toolCallId,
        error: null,
        result_payload: sha,
        executed_by: "output",
        sandboxed: true,
      },
    });
    return args;
  });
}
