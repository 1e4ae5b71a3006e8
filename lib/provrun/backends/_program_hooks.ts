/**
 * The hook listener of an agent program's run: a server on 127.0.0.1 to which the program's hooks POST their JSON
 * input. Each hook event becomes one `hook_called` event; a blocking `PreToolUse` hook asks the broker
 * (`decideToolCall`) and is refused outside the run's grants, and refused too (fails closed) when its event
 * cannot be written. The tool calls the hooks report become `tool_called` events (`_program_tools.ts`).
 *
 * Only the run's program may write there, so the door is the span receiver's: the run's random key in a header
 * (`Authorization: Bearer`, compared in constant time), never in the address, since a `curl` command hook's
 * arguments are readable by every local user (`ps`) and an address goes into logs; a `Host` of the listener
 * itself (against DNS rebinding) and no web page's `Origin`. Strangers are refused before their body is read, and
 * counted. A hook's input is bounded: past the bound a blocking hook is denied, and another one refused.
 * @module
 */
import { join } from "node:path";
import type { Span } from "@opentelemetry/api";
import { crossSite, localHosts, refusedHost } from "../../provevi/guard/local_request.ts";
import {
  bearerOf,
  newSecret,
  sameSecret,
  secretDigest,
  writePrivateFile,
} from "../../provevi/guard/local_secret.ts";
import { shutdownWithin } from "../../provevi/guard/local_server.ts";
import { serveDoor } from "../../provevi/guard/mod.ts";
import { BodyTooLarge, readSpanBody } from "../../provevi/receiver/span_body.ts";
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
  /** The description of a tool the model was offered, for its calls' spans (from a model gateway). */
  toolDescription?: (name: string, callId?: string) => string | null;
  /** The reply the program gets for an event and its decision (null when the event does not block). */
  reply(event: string, decision: HookDecision | null): unknown;
  /** The files that carry the hooks which differ from what provr wrote: a blocking hook is refused then. */
  changed?(): Promise<string[]>;
}

/** A listening hook listener. */
export interface HookListener {
  /** The URL the program's hooks POST to: it holds no key. */
  readonly url: string;
  /** The headers each hook sends (`authorization: Bearer <key>`): keep them out of any URL and argument. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The hook events taken, the calls refused, and the requests refused as a stranger's (no key, another
   * `Host`, a web page's) or as too large.
   */
  readonly counts: { hooks: number; refused: number; strangers: number };
  /**
   * Stops listening, after the requests under way are answered (within 2 s: a stranger cannot hold it open);
   * tool calls left open are ended as failed.
   */
  shutdown(): Promise<void>;
}

/** The largest input of one hook, 32 MiB: a tool's whole result is in a `PostToolUse` hook's input. */
export const MAX_HOOK_INPUT = 32 * 1024 * 1024;

/** Why a request is not from the run's program, as a status and one line, or null when it is. */
function stranger(
  request: Request,
  door: { hosts: readonly string[]; key: Uint8Array },
): { status: number; message: string } | null {
  const host = refusedHost(request, door.hosts);
  if (host !== null) return { status: 421, message: `refused the Host "${host.slice(0, 100)}"` };
  const site = crossSite(request, door.hosts);
  if (site !== null) return { status: 403, message: `refused a request from a web page (${site})` };
  if (!sameSecret(bearerOf(request), door.key)) {
    return { status: 401, message: "send the run's hook key as Authorization: Bearer <key>" };
  }
  if (request.method !== "POST" || new URL(request.url).pathname !== "/hook") {
    return { status: 404, message: "the hook listener takes a hook's input at POST /hook" };
  }
  return null;
}

/**
 * Starts the hook listener of a run.
 *
 * @param options The recorder, the grants, the program's span and its replies.
 * @returns The listener, listening on 127.0.0.1 at a free port.
 */
export function listenForHooks(options: HookListenerOptions): HookListener {
  const key = newSecret();
  const counts = { hooks: 0, refused: 0, strangers: 0 };
  let door: { hosts: string[]; key: Uint8Array } | null = null;
  const tools = new ProgramToolCalls(options.recorder, {
    component: options.component,
    program: options.program,
    ...(options.toolDescription ? { toolDescription: options.toolDescription } : {}),
  });
  // a connection the door cuts (slow, idle or crowding) is a stranger's: the run's program sends whole requests
  const server = serveDoor(
    { hostname: "127.0.0.1", port: 0, onRefusal: () => void counts.strangers++ },
    async (request) => {
      const refusal = stranger(request, door!);
      if (refusal !== null) {
        counts.strangers++;
        request.body?.cancel().catch(() => {});
        return Response.json({ error: `hook listener: ${refusal.message}` }, { status: refusal.status });
      }
      const read = await readHook(request);
      if (typeof read === "string") {
        // The run's own program sent an input that cannot be read: whatever it was, it is refused and recorded,
        // since a program treats an error answer to a blocking hook as leave to go on.
        counts.hooks++;
        counts.refused++;
        return Response.json(options.reply("PreToolUse", await recordUnread(options, read)));
      }
      const { text, input } = read;
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
    },
  );
  door = { hosts: localHosts(server.addr.port), key: secretDigest(key) };
  let closed: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    headers: Object.freeze({ authorization: `Bearer ${key}` }),
    counts,
    shutdown: () => closed ??= shutdownWithin(server).then(() => tools.end()),
  };
}

/**
 * The shell command of a hook that `curl`s its input to the listener: the key goes in a file only the user can
 * read (`curl -H @file`), since a command's arguments are readable by every local user.
 *
 * @param hook The listener's URL and headers.
 * @param headerFile Where to write the headers (in the program's config home).
 * @returns The command; `curl -f` fails on an HTTP error.
 */
export async function curlHookCommand(
  hook: { url: string; headers: Readonly<Record<string, string>> },
  headerFile: string,
): Promise<string> {
  const lines = Object.entries({ ...hook.headers, "content-type": "application/json" })
    .map(([k, v]) => `${k}: ${v}\n`).join("");
  await writePrivateFile(headerFile, lines);
  return `curl -sSf --max-time 60 -H ${shellQuote(`@${headerFile}`)} --data-binary @- ${
    shellQuote(hook.url)
  }`;
}

/** A word for a POSIX shell, whatever it holds. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Where a program's hook commands find their headers, in its config home. */
export function hookHeaderFile(home: string): string {
  return join(home, "hook-headers");
}

/** A hook's input as text and object, or why it cannot be read. */
async function readHook(
  request: Request,
): Promise<{ text: string; input: Record<string, unknown> } | string> {
  let text: string;
  try {
    text = new TextDecoder().decode(await readSpanBody(request, MAX_HOOK_INPUT));
  } catch (error) {
    return error instanceof BodyTooLarge
      ? `the hook's input is over the listener's limit of ${MAX_HOOK_INPUT} bytes`
      : `the hook's input cannot be read: ${errorMessage(error)}`;
  }
  const input = hookInput(text);
  return input === null ? "the hook's input is not a JSON object" : { text, input };
}

/** Writes the `hook_called` event of an input that could not be read, and its refusal. */
async function recordUnread(options: HookListenerOptions, reason: string): Promise<HookDecision> {
  const decision = { allow: false, reason };
  await options.recorder.record({
    type: "hook_called",
    component: options.component,
    payload: null,
    data: {
      program: options.program,
      event: "unknown",
      tool: null,
      tool_use_id: null,
      blocking: true,
      decision: "deny",
      reason,
    },
  }, options.span).catch(() => {});
  return decision;
}

function hookInput(text: string): Record<string, unknown> | null {
  try {
    const input = JSON.parse(text);
    return typeof input === "object" && input !== null && !Array.isArray(input) ? input : null;
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
  const changes = decision?.allow && options.changed ? await options.changed() : [];
  if (changes.length > 0) {
    // The config that holds the hooks is not the one provr wrote: nothing it grants can be trusted.
    decision = {
      allow: false,
      reason: `the program changed the config that holds its hooks (${changes.join("; ")})`,
    };
  }
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
