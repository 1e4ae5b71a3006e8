/**
 * The inside of the sandbox: a Deno Worker, started by {@linkcode Sandbox} with the run's permissions, that
 * holds the built-in tools and the tools folder's modules and runs one tool call at a time. Nothing here runs
 * in the caller of record; an error (Deno's `NotCapable` among them) goes back by name and message.
 *
 * Messages in: `{ op: "init", root }` first, then `{ id, tool, args, callId }` per call. Messages out:
 * `{ op: "ready", tools }` once,
 * `{ op: "failed", error }` when the tools cannot be loaded, and `{ id, ok, value | error }` per call.
 * @module
 */
import { z } from "zod";
import { FS_TOOLS, type JsonSchema, type SandboxTool, toolContext } from "./fs_tools.ts";

/** A tool's definition as the model and the evidence see it. */
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

/** A loaded tools module: where it came from and what it exports. */
export interface LoadedModule {
  url: string;
  mod: Record<string, unknown>;
}

interface Loaded {
  tool: SandboxTool;
  definition: ToolDefinition;
  zod: { safeParse(v: unknown): { success: boolean; data?: unknown; error?: { message: string } } } | null;
}

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

function isZod(schema: unknown): boolean {
  return !!schema && typeof schema === "object" && "~standard" in schema &&
    typeof (schema as { safeParse?: unknown }).safeParse === "function";
}

/**
 * Checks a module's `TOOLS` and turns each into a definition.
 * @throws TypeError naming the module, the tool and what is wrong.
 * @example
 * ```ts
 * import { loadTools } from "./sandbox_worker.ts";
 * loadTools([], true).map((t) => t.definition.name); // ["read_file", "list_files", "grep_file", "write_file", "note"]
 * ```
 */
export function loadTools(modules: LoadedModule[], builtins: boolean): Loaded[] {
  const out: Loaded[] = [];
  const add = (tool: SandboxTool, where: string) => {
    const t = tool as unknown as Record<string, unknown>;
    const label = `${where}: tool ${typeof t?.name === "string" ? `"${t.name}"` : "without a name"}`;
    if (!t || typeof t !== "object") throw new TypeError(`${where}: each entry of TOOLS is an object`);
    if (typeof t.name !== "string" || !NAME.test(t.name)) {
      throw new TypeError(`${label}: a name is 1 to 64 letters, digits, _, . or -`);
    }
    if (typeof t.description !== "string" || !t.description.trim()) {
      throw new TypeError(`${label}: needs a description`);
    }
    if (typeof t.execute !== "function") throw new TypeError(`${label}: needs an execute function`);
    let schema: JsonSchema;
    let zod: Loaded["zod"] = null;
    if (isZod(t.schema)) {
      zod = t.schema as Loaded["zod"];
      schema = z.toJSONSchema(t.schema as z.ZodType, { io: "input" }) as JsonSchema;
      delete schema.$schema;
    } else if (t.schema && typeof t.schema === "object" && !Array.isArray(t.schema)) {
      schema = t.schema as JsonSchema;
    } else {
      throw new TypeError(`${label}: needs a schema, a JSON schema object or a zod schema`);
    }
    if (out.some((o) => o.definition.name === t.name)) {
      throw new TypeError(`${label}: the name is taken by another tool`);
    }
    out.push({ tool, zod, definition: { name: t.name, description: t.description, input_schema: schema } });
  };
  if (builtins) { for (const tool of FS_TOOLS) add(tool, "the built-in tools"); }
  for (const { url, mod } of modules) {
    const tools = mod.TOOLS;
    if (!Array.isArray(tools)) throw new TypeError(`${url}: exports no TOOLS list`);
    for (const tool of tools) add(tool as SandboxTool, url);
  }
  return out;
}

interface Port {
  onmessage: ((e: MessageEvent) => void) | null;
  postMessage(message: unknown): void;
}

/**
 * Serves tool calls in this worker. The run folder comes in the first message, so that the bootstrap module
 * is the same for every run with the same tools (and is loaded and checked once).
 *
 * @param modules The tools folder's modules, imported by the worker's bootstrap.
 * @param options `builtins`: offer the built-in tools.
 * @example
 * ```ts ignore
 * // The bootstrap module that Sandbox makes:
 * import { serve } from "./sandbox_worker.ts";
 * import * as m0 from "./tools/lookup.ts";
 * serve([{ url: "./tools/lookup.ts", mod: m0 }], { builtins: true });
 * ```
 */
export function serve(modules: LoadedModule[], options: { builtins: boolean }): void {
  const port = globalThis as unknown as Port;
  let tools: Loaded[];
  try {
    tools = loadTools(modules, options.builtins);
  } catch (error) {
    port.postMessage({ op: "failed", error: describe(error) });
    return;
  }
  const byName = new Map(tools.map((t) => [t.definition.name, t]));
  let root = "";
  port.onmessage = (e: MessageEvent) => {
    root = (e.data as { root: string }).root;
    port.onmessage = onCall;
    port.postMessage({ op: "ready", tools: tools.map((t) => t.definition) });
  };
  const onCall = async (e: MessageEvent) => {
    const { id, tool, args, callId } = e.data as { id: number; tool: string; args: unknown; callId: string };
    try {
      const loaded = byName.get(tool);
      if (!loaded) throw new TypeError(`no tool "${tool}" in the sandbox`);
      let input = args;
      if (loaded.zod) {
        const parsed = loaded.zod.safeParse(args);
        if (!parsed.success) {
          throw new TypeError(`the arguments do not fit the schema: ${parsed.error?.message}`);
        }
        input = parsed.data;
      }
      const value = await loaded.tool.execute(input as never, toolContext(root, callId));
      port.postMessage({
        id,
        ok: true,
        value: value === undefined ? null : JSON.parse(JSON.stringify(value)),
      });
    } catch (error) {
      port.postMessage({ id, ok: false, error: describe(error) });
    }
  };
}

function describe(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name || "Error", message: error.message };
  return { name: "Error", message: String(error) };
}
