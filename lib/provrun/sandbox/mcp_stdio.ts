/**
 * The stdio transport of a local MCP server, started in a process group of its own, so that at the seal
 * every process the server started (a `sh -c` that forks, a `node` server's workers) is stopped with it, and
 * watched by the reaper, so that it dies with provr even when provr is killed.
 * @module
 */
import { Buffer } from "node:buffer";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { forgetProcess, stopGroup, watchProcess } from "./reaper.ts";

/** The variables a server inherits, as the MCP SDK's own stdio transport passes them; nothing else. */
const SERVER_ENV = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
/** And a Deno server, what finds the module cache that provr's Deno uses (as a sandbox process gets them). */
const CACHE_ENV = ["DENO_DIR", "XDG_CACHE_HOME"];
const encoder = new TextEncoder();

/**
 * A stdio MCP transport whose server leads its own process group.
 *
 * @example
 * ```ts ignore
 * import { GroupStdioTransport } from "./mcp_stdio.ts";
 * const transport = new GroupStdioTransport({ command: "node", args: ["server.js"], cwd: "." });
 * await client.connect(transport);
 * await transport.stop(2000); // "exited" or "killed"
 * ```
 */
export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The start of what the server wrote to its stderr (4 KiB), to say why a server that died did. */
  stderrText = "";
  #process: Deno.ChildProcess | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #ended = false;
  #exited: Promise<void> = Promise.resolve();
  readonly #buffer = new ReadBuffer();
  /** The readers of the server's stdout and stderr, cancelled at the stop (a process that left the group may
   * still hold the pipes, and a pending read would keep provr from exiting). */
  readonly #readers: ReadableStreamDefaultReader<Uint8Array>[] = [];

  /**
   * @param params The program, its arguments and its folder; `denoCache`: the server is a Deno script that
   * provr started, so it gets the variables that find provr's module cache too (with `DENO_DIR` elsewhere and
   * only `HOME`, it looked in an empty cache under the home, and fetched every package again, or failed
   * offline).
   */
  constructor(readonly params: { command: string; args: string[]; cwd: string; denoCache?: boolean }) {}

  /** The server's PID, which is also its process group's ID (0 before it starts). */
  get pid(): number {
    return this.#process?.pid ?? 0;
  }

  /** True once the server's own process has ended. */
  get ended(): boolean {
    return this.#ended;
  }

  start(): Promise<void> {
    const env: Record<string, string> = {};
    for (const name of this.params.denoCache ? [...SERVER_ENV, ...CACHE_ENV] : SERVER_ENV) {
      try {
        const value = Deno.env.get(name);
        if (value !== undefined && !value.startsWith("()")) env[name] = value;
      } catch {
        // Not granted to provr: the server does without it.
      }
    }
    const process = new Deno.Command(this.params.command, {
      args: this.params.args,
      cwd: this.params.cwd,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true, // its own process group (setsid), stopped as one at the seal
    }).spawn();
    this.#process = process;
    this.#writer = process.stdin.getWriter();
    const pid = process.pid;
    watchProcess(-pid);
    this.#exited = Promise.all([process.status, this.#readOut(process), this.#readErr(process)]).then(() => {
      this.#ended = true;
      this.onclose?.();
    }, () => {
      this.#ended = true;
    });
    return Promise.resolve();
  }

  async #readOut(process: Deno.ChildProcess): Promise<void> {
    const reader = process.stdout.getReader();
    this.#readers.push(reader);
    try {
      for (;;) {
        const { value: chunk, done } = await reader.read();
        if (done) break;
        this.#buffer.append(Buffer.from(chunk));
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.#buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      }
    } catch (error) {
      this.onerror?.(error as Error);
    }
  }

  async #readErr(process: Deno.ChildProcess): Promise<void> {
    const decoder = new TextDecoder();
    const reader = process.stderr.getReader();
    this.#readers.push(reader);
    try {
      for (;;) {
        const { value: chunk, done } = await reader.read();
        if (done) break;
        if (this.stderrText.length < 4096) this.stderrText += decoder.decode(chunk, { stream: true });
      }
    } catch {
      // The server was killed.
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#ended) throw new Error("Not connected");
    await this.#writer.write(encoder.encode(serializeMessage(message)));
  }

  /** Closes the server's stdin and gives it up to 2 seconds to end on its own (the SDK's first grace). */
  async close(): Promise<void> {
    if (!this.#writer) return;
    const writer = this.#writer;
    this.#writer = null;
    await writer.close().catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.#exited, new Promise((resolve) => timer = setTimeout(resolve, 2000))]);
    clearTimeout(timer);
  }

  /**
   * Stops the server's whole process group: SIGTERM, `graceMs`, then SIGKILL, through the reaper (else its
   * own process only, through its handle).
   *
   * @returns `exited` when nothing needed SIGKILL, `killed` when something did.
   */
  async stop(graceMs: number): Promise<"exited" | "killed"> {
    const process = this.#process;
    if (!process) return "exited";
    await this.close();
    let ended = await stopGroup(process.pid, this.#ended ? 200 : graceMs);
    if (ended === null) {
      // No reaper: stop the leader only.
      ended = this.#ended ? "exited" : "killed";
      if (!this.#ended) {
        try {
          process.kill("SIGKILL");
        } catch {
          // It has just ended.
        }
      }
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.#exited, new Promise((resolve) => timer = setTimeout(resolve, 2000))]);
    clearTimeout(timer);
    // Whatever still holds the server's pipes (a process that left its group with setsid) is not waited for.
    for (const reader of this.#readers) reader.cancel().catch(() => {});
    await process.status.catch(() => {});
    forgetProcess(-process.pid);
    return ended;
  }
}
