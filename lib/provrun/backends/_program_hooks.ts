/**
 * The hook listener of an agent program's run: a server on 127.0.0.1 at a path with a token of the run, to which
 * the program's hooks POST their JSON input. Each hook event becomes one `hook_called` event; a blocking
 * `PreToolUse` hook asks the broker (`decideToolCall`) and is refused outside the run's grants, and refused too
 * (fails closed) when its event cannot be written. The tool calls the hooks report become `tool_called` events
 * (`_program_tools.ts`).
 * @module
 */
import type { Span } from "@opentelemetry/api";
import { errorMessage, type EvidenceRecorder } from "../run/recorder.ts";
import { decideToolCall, type ToolGrants } from "./tool_grants.ts";
import { ProgramToolCalls } from "./_program_tools.ts";

/** A tool call's decision: allowed or not, and why. */
export type HookDecision = { allow: boolean; reason: string };

/** What the listener needs of the run. */
export interface HookListenerOptions {
  recorder: EvidenceRecorder;
  /** The backend's class name, written as `component`. */
  component: string;
  /** The backend's name (`claude-code`, `codex`), written as `data.program`. */
  program: string;
  /** The run's grants, which decide a blocking hook. */
  grants: ToolGrants;
  /** The program's step, the span its hook events belong to. */
  span: Span;
  /** The reply the program gets for an event and its decision (null when the event does not block). */
  reply(event: string, decision: HookDecision | null): unknown;
}

/** A listening hook listener. */
export interface HookListener {
  /** The URL the program's hooks POST to. */
  readonly url: string;
  /** The hook events taken, and the calls refused. */
  readonly counts: { hooks: number; refused: number };
  /** Stops listening, after the requests under way are answered; tool calls left open are ended as failed. */
  shutdown(): Promise<void>;
}

/**
 * Starts the hook listener of a run.
 *
 * @param options The recorder, the grants, the program's span and its replies.
 * @returns The listener, listening on 127.0.0.1 at a free port.
 */
export function listenForHooks(options: HookListenerOptions): HookListener {
  const token = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0"))
    .join("");
  const counts = { hooks: 0, refused: 0 };
  const tools = new ProgramToolCalls(options.recorder, {
    component: options.component,
    program: options.program,
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    if (request.method !== "POST" || new URL(request.url).pathname !== `/hook/${token}`) {
      return new Response("not found", { status: 404 });
    }
    const text = await request.text();
    const input = hookInput(text);
    if (input === null) return Response.json({ error: "a hook's input is a JSON object" }, { status: 400 });
    const event = typeof input.hook_event_name === "string" ? input.hook_event_name : "unknown";
    counts.hooks++;
    const decision = await decideAndRecord(options, { text, input, event });
    if (decision && !decision.allow) counts.refused++;
    await tools.take({
      event,
      tool: typeof input.tool_name === "string" ? input.tool_name : null,
      id: typeof input.tool_use_id === "string" ? input.tool_use_id : null,
      input,
      decision,
    }).catch(() => {});
    return Response.json(options.reply(event, decision));
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook/${token}`,
    counts,
    shutdown: async () => {
      await server.shutdown();
      await tools.end();
    },
  };
}

function hookInput(text: string): Record<string, unknown> | null {
  try {
    const input = JSON.parse(text);
    return typeof input === "object" && input !== null ? input : null;
  } catch {
    return null;
  }
}

/** Decides a blocking hook's call, and writes the hook's `hook_called` event. */
async function decideAndRecord(
  options: HookListenerOptions,
  hook: { text: string; input: Record<string, unknown>; event: string },
): Promise<HookDecision | null> {
  const { recorder } = options;
  const { input, event } = hook;
  const tool = typeof input.tool_name === "string" ? input.tool_name : null;
  const blocking = event === "PreToolUse";
  let decision = blocking
    ? decideToolCall(tool ?? "", (input.tool_input ?? {}) as Record<string, unknown>, options.grants)
    : null;
  try {
    await recorder.record({
      type: "hook_called",
      component: options.component,
      payload: await recorder.payload(hook.text),
      data: {
        program: options.program,
        event,
        tool,
        tool_use_id: typeof input.tool_use_id === "string" ? input.tool_use_id : null,
        blocking,
        decision: decision === null ? null : decision.allow ? "allow" : "deny",
        reason: decision?.reason ?? null,
      },
    }, options.span);
  } catch (error) {
    // The evidence cannot take the call: a blocking hook fails closed.
    if (blocking) {
      decision = { allow: false, reason: `the run's evidence cannot be written: ${errorMessage(error)}` };
    }
  }
  return decision;
}
