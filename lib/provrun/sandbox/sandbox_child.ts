/**
 * The inside of a sandbox process: the Deno child that {@linkcode Sandbox} starts with the run's grants as
 * `--allow-*` flags and `--no-prompt`. It holds the built-in tools and the tools folder's modules and runs one
 * call at a time, reading requests from its stdin and writing replies to its stdout, one JSON line each. A
 * tool's console goes into its reply (`console`), never to a terminal.
 *
 * Lines in: `{ op: "init", root }` first, then `{ id, tool, args, callId }` per call. Lines out:
 * `{ op: "ready", tools }` once, `{ op: "failed", error }` when the tools cannot be loaded, and
 * `{ id, ok, value | error, console }` per call.
 * @module
 */
import { stdin, stdout, takeConsole } from "./_child_guard.ts";
import { type LoadedModule, loadTools, runCall } from "./sandbox_worker.ts";

const encoder = new TextEncoder();

async function send(line: string): Promise<void> {
  const bytes = encoder.encode(line + "\n");
  let done = 0;
  while (done < bytes.length) done += await stdout.write(bytes.subarray(done));
}

async function* lines(): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const buf = new Uint8Array(64 * 1024);
  let rest = "";
  for (;;) {
    const n = await stdin.read(buf);
    if (n === null) return;
    rest += decoder.decode(buf.subarray(0, n), { stream: true });
    let i: number;
    while ((i = rest.indexOf("\n")) >= 0) {
      yield rest.slice(0, i);
      rest = rest.slice(i + 1);
    }
  }
}

/**
 * Serves tool calls in this process until its stdin closes.
 *
 * @param modules The tools folder's modules, imported statically by the process's bootstrap.
 * @param options `builtins`: offer the built-in tools; `resultBytes`: the largest result, as JSON.
 * @example
 * ```ts ignore
 * // The bootstrap module that Sandbox makes:
 * import "./_child_guard.ts";
 * import * as m0 from "./tools/lookup.ts";
 * import { serveProcess } from "./sandbox_child.ts";
 * await serveProcess([{ url: "./tools/lookup.ts", mod: m0 }], { builtins: true, resultBytes: 1e7 });
 * ```
 */
export async function serveProcess(
  modules: LoadedModule[],
  options: { builtins: boolean; resultBytes: number },
): Promise<void> {
  let tools;
  try {
    tools = loadTools(modules, options.builtins);
  } catch (error) {
    await send(JSON.stringify({ op: "failed", error: describe(error) }));
    return;
  }
  const byName = new Map(tools.map((t) => [t.definition.name, t]));
  let root = "";
  for await (const line of lines()) {
    const message = JSON.parse(line) as {
      op?: string;
      root?: string;
      id: number;
      tool: string;
      args: unknown;
      callId: string;
    };
    if (message.op === "init") {
      root = message.root ?? "";
      takeConsole();
      await send(JSON.stringify({ op: "ready", tools: tools.map((t) => t.definition) }));
      continue;
    }
    const { id } = message;
    let reply: string;
    try {
      const text = await runCall(byName, root, message);
      if (tooLarge(text, options.resultBytes)) {
        throw Object.assign(
          new RangeError(
            `the result is ${text.length} characters as JSON, past the limit of ${options.resultBytes} bytes ` +
              `(agent.limits.tool_result_bytes); return less, or raise the limit`,
          ),
          { name: "ResultTooLarge" },
        );
      }
      reply = `{"id":${id},"ok":true,"console":${JSON.stringify(takeConsole())},"value":${text}}`;
    } catch (error) {
      reply = JSON.stringify({ id, ok: false, error: describe(error), console: takeConsole() });
    }
    await send(reply);
  }
}

/** A UTF-8 byte is at least one and at most three per UTF-16 unit, so most texts need no encoding here. */
function tooLarge(text: string, limit: number): boolean {
  if (text.length > limit) return true;
  if (text.length * 3 <= limit) return false;
  return encoder.encode(text).length > limit;
}

function describe(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name || "Error", message: error.message };
  return { name: "Error", message: String(error) };
}
