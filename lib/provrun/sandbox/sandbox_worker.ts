/**
 * The tools of a sandbox process: checking a tools module's `TOOLS`, and running one call of a loaded tool.
 * It runs inside the process (see `sandbox_child.ts`), never in the caller of record; an error (Deno's
 * `NotCapable` among them) goes back by name and message.
 *
 * zod is not imported here: a tool's zod schema gives its own JSON schema (`toJSONSchema`, zod 4's classic
 * API, the pinned one), so a sandbox process whose tools bring no zod never loads it (a quarter of its start).
 * @module
 */
import { FS_TOOLS, type JsonSchema, type SandboxTool, toolContext } from "./fs_tools.ts";

/** A tool's definition as the model and the evidence see it. */
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: JsonSchema;
  /** Present (true) when the tool declares that running it twice has the effect of running it once. */
  idempotent?: boolean;
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
    if (t.idempotent !== undefined && typeof t.idempotent !== "boolean") {
      throw new TypeError(`${label}: idempotent is true or false`);
    }
    let schema: JsonSchema;
    let zod: Loaded["zod"] = null;
    if (isZod(t.schema)) {
      zod = t.schema as Loaded["zod"];
      const own = (t.schema as { toJSONSchema?: unknown }).toJSONSchema;
      if (typeof own !== "function") {
        throw new TypeError(
          `${label}: its schema gives no JSON schema; use zod 4's (import { z } from "zod")`,
        );
      }
      schema = own.call(t.schema, { io: "input" }) as JsonSchema;
      delete schema.$schema;
    } else if (t.schema && typeof t.schema === "object" && !Array.isArray(t.schema)) {
      schema = t.schema as JsonSchema;
    } else {
      throw new TypeError(`${label}: needs a schema, a JSON schema object or a zod schema`);
    }
    if (out.some((o) => o.definition.name === t.name)) {
      throw new TypeError(`${label}: the name is taken by another tool`);
    }
    const definition: ToolDefinition = { name: t.name, description: t.description, input_schema: schema };
    if (t.idempotent === true) definition.idempotent = true;
    out.push({ tool, zod, definition });
  };
  if (builtins) { for (const tool of FS_TOOLS) add(tool, "the built-in tools"); }
  for (const { url, mod } of modules) {
    const tools = mod.TOOLS;
    if (!Array.isArray(tools)) throw new TypeError(`${url}: exports no TOOLS list`);
    for (const tool of tools) add(tool as SandboxTool, url);
  }
  return out;
}

/** A tool loaded for calls, by name. */
export type LoadedTools = Map<string, Loaded>;

/**
 * Runs one call of a loaded tool: checks its arguments against its zod schema, runs it, and gives its result
 * as JSON text (`null` for nothing).
 *
 * @param byName The loaded tools, by name.
 * @param root The run folder.
 * @param call The tool's name, its arguments and the call's ID.
 * @returns The result as JSON text.
 * @throws TypeError for an unknown tool or arguments the schema refuses; whatever the tool throws.
 */
export async function runCall(
  byName: LoadedTools,
  root: string,
  call: { tool: string; args: unknown; callId: string },
): Promise<string> {
  const loaded = byName.get(call.tool);
  if (!loaded) throw new TypeError(`no tool "${call.tool}" in the sandbox`);
  let input = call.args;
  if (loaded.zod) {
    const parsed = loaded.zod.safeParse(call.args);
    if (!parsed.success) throw new TypeError(`the arguments do not fit the schema: ${parsed.error?.message}`);
    input = parsed.data;
  }
  const value = await loaded.tool.execute(input as never, toolContext(root, call.callId));
  return JSON.stringify(value === undefined ? null : value) ?? "null";
}
