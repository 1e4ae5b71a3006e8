/**
 * The tool calls of an agent program as `tool_called` events, made from its hooks: a call's step opens at its
 * `PreToolUse` (allowed), and ends at its `PostToolUse` (the tool's input as the payload, its response as
 * `result_payload`) or `PostToolUseFailure` (an error); a call the broker refused is a `tool_called` with the
 * error `ToolRefused` at once. `call_id` is the tool-use ID, which joins the call to the `model_called` whose
 * response asked for it. A call the program never reported the end of is a `step_failed` when the program ends.
 * The events are `parsed`: provr decided the call, but the program ran it and reported it.
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import { toolContent } from "../../provevi/telemetry/mod.ts";
import type { EvidenceRecorder, OpenStep } from "../run/recorder.ts";
import { setSpanContent } from "../run/_span_content.ts";

/** The most calls open at once that get a step of their own; a program past it gets none for the rest. */
const MAX_OPEN = 1000;

/** What a hook says of a tool call. */
export interface ToolHook {
  event: string;
  tool: string | null;
  id: string | null;
  input: Record<string, unknown>;
  decision: { allow: boolean; reason: string } | null;
}

/** The tool calls of one program's run. */
export class ProgramToolCalls {
  readonly #recorder: EvidenceRecorder;
  readonly #component: string;
  readonly #program: string;
  readonly #describe: (name: string, callId?: string) => string | null;
  readonly #open = new Map<string, { step: OpenStep; tool: string; args: Promise<string | null> }>();

  /**
   * @param recorder The run's recorder.
   * @param options The component, the program's name, and the description of a tool the model was offered.
   */
  constructor(
    recorder: EvidenceRecorder,
    options: {
      component: string;
      program: string;
      toolDescription?: (name: string, callId?: string) => string | null;
    },
  ) {
    this.#recorder = recorder;
    this.#component = options.component;
    this.#program = options.program;
    this.#describe = options.toolDescription ?? (() => null);
  }

  /** Takes a hook event; one that is not about a tool call's start or end is skipped. */
  async take(hook: ToolHook): Promise<void> {
    if (hook.id === null || hook.tool === null) return;
    if (hook.event === "PreToolUse" && hook.decision) {
      if (hook.decision.allow) this.#start(hook.id, hook.tool, hook.input);
      else await this.#refused(hook.id, hook.tool, hook.input, hook.decision.reason);
    } else if (hook.event === "PostToolUse" || hook.event === "PostToolUseFailure") {
      await this.#end(hook);
    }
  }

  #startStep(tool: string, id: string, args: unknown): OpenStep {
    const description = this.#describe(tool, id);
    // as an agent run's tool calls: steps of the run, not of the model call that asked for them
    const step = this.#recorder.atTop(() =>
      this.#recorder.startStep({
        component: this.#component,
        spanName: `execute_tool ${tool}`,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": tool,
          "gen_ai.tool.call.id": id,
          // the model calls them as functions it was offered; the program runs them
          "gen_ai.tool.type": "function",
          ...(description === null ? {} : { "gen_ai.tool.description": description }),
        },
      })
    );
    setSpanContent(step.span, () => toolContent((args ?? null) as Json, undefined));
    return step;
  }

  #start(id: string, tool: string, input: Record<string, unknown>): void {
    if (this.#open.has(id) || this.#open.size >= MAX_OPEN) return;
    const args = this.#recorder.payload(JSON.stringify(input.tool_input ?? null));
    args.catch(() => {});
    this.#open.set(id, { step: this.#startStep(tool, id, input.tool_input), tool, args });
  }

  #data(tool: string, id: string): { [key: string]: Json } {
    return { tool, call_id: id, executed_by: "program", program: this.#program, sandboxed: false };
  }

  async #refused(id: string, tool: string, input: Record<string, unknown>, reason: string): Promise<void> {
    const step = this.#startStep(tool, id, input.tool_input);
    await step.end("tool_called", {
      confidence: "parsed",
      payload: await this.#recorder.payload(JSON.stringify(input.tool_input ?? null)),
      data: { ...this.#data(tool, id), error: "ToolRefused", message: reason, result_payload: null },
    });
  }

  async #end(hook: ToolHook): Promise<void> {
    const open = this.#open.get(hook.id!);
    if (!open) return;
    this.#open.delete(hook.id!);
    const failed = hook.event === "PostToolUseFailure";
    const response = failed ? hook.input.error ?? null : hook.input.tool_response ?? null;
    const result = await this.#recorder.payload(JSON.stringify(response));
    // the model call that asked for it may have been recorded after the call started
    const description = this.#describe(open.tool, hook.id!);
    if (description !== null) open.step.span.setAttribute("gen_ai.tool.description", description);
    if (!failed) {
      setSpanContent(open.step.span, () => ({
        "gen_ai.tool.call.result": toolContent(null, response as Json)["gen_ai.tool.call.result"]!,
      }));
    }
    await open.step.end("tool_called", {
      confidence: "parsed",
      payload: await open.args,
      data: {
        ...this.#data(open.tool, hook.id!),
        error: failed ? "ToolError" : null,
        ...(failed
          ? { message: typeof response === "string" ? response.slice(0, 500) : "the tool failed" }
          : {}),
        result_payload: result,
      },
    });
  }

  /** The program ended: each call it never reported the end of is a `step_failed`. */
  async end(): Promise<void> {
    for (const [id, open] of this.#open) {
      this.#open.delete(id);
      await open.step.fail(
        "tool_called",
        new Error("the program ended before it reported the end of the tool call"),
        {
          payload: await open.args.catch(() => null),
          data: this.#data(open.tool, id),
        },
      ).catch(() => {});
    }
  }
}
