/**
 * Small helpers of the agent-program backends: the PATH they pass on, the session files they import.
 * @module
 */
import { join, relative } from "node:path";
import { ProveviError } from "../../provevi/evidence/errors.ts";
import { IrregularFile, readRegularFile } from "../../provevi/evidence/open_file.ts";

/** The variables that locate the user's own tools, passed on; nothing else of provr's environment is. */
export function basePath(env: (name: string) => string | undefined): string {
  return env("PATH") ?? "/usr/local/bin:/usr/bin:/bin";
}

/**
 * Headers in the form of `OTEL_EXPORTER_OTLP_HEADERS`: `name=value` pairs joined by commas. The values are
 * written as they are, not percent-encoded: the OpenTelemetry SDKs decode them, but Claude Code reads them as
 * written (`Bearer%20…` reached the receiver), and a value without `%`, `,` or `=` is the same either way.
 *
 * @throws RangeError for a value with `%`, `,` or `=`, which the two kinds of reader would read apart.
 */
export function otlpHeaders(headers: Readonly<Record<string, string>>): string {
  return Object.entries(headers).map(([k, v]) => {
    if (/[%,=]/.test(k + v)) throw new RangeError(`the header ${k} has a %, a comma or an =`);
    return `${k}=${v}`;
  }).join(",");
}

/** The `.jsonl` files under a folder, sorted; none when it is absent. */
export async function jsonlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(d)];
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory) await walk(p);
      else if (e.isFile && e.name.endsWith(".jsonl")) out.push(p);
    }
  };
  await walk(dir);
  return out.sort();
}

/** True when a file exists. */
export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The most bytes provr reads of a file an agent program leaves in its run folder (a session file, its answer,
 * a file that holds its hooks). Each is read only as a regular file, never through a link, and never waiting on
 * a FIFO: the program may have put anything there.
 */
export const PROGRAM_FILE_MAX_BYTES = 256 * 1024 * 1024;

/**
 * The bytes of a file the program may have made, or null when there is none.
 *
 * @param path The file (absolute).
 * @param folder The run folder, which the error names the file from.
 * @returns The bytes, or null when absent.
 * @throws ProveviError, one line naming the file: a link, a FIFO, a device or a folder in its place, a file
 * over {@linkcode PROGRAM_FILE_MAX_BYTES}, or one that cannot be read.
 */
export async function readProgramFile(path: string, folder: string): Promise<Uint8Array | null> {
  try {
    return await readRegularFile(path, PROGRAM_FILE_MAX_BYTES);
  } catch (error) {
    if (!(error instanceof IrregularFile)) throw error;
    throw new ProveviError(
      `the program left ${relative(folder, path)} that provr does not read: it ${error.reason}`,
      { cause: error },
    );
  }
}

/** The JSON objects of the lines of some JSONL files; a line that is not JSON (being written) is skipped. */
async function jsonLines(files: string[]): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const file of files) {
    let text: string;
    try {
      const bytes = await readRegularFile(file, PROGRAM_FILE_MAX_BYTES);
      if (bytes === null) continue;
      text = new TextDecoder().decode(bytes);
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        const value = JSON.parse(line);
        if (value !== null && typeof value === "object" && !Array.isArray(value)) out.push(value);
      } catch { /* a torn last line */ }
    }
  }
  return out;
}

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * The tokens of Claude Code's transcripts: each assistant message's usage (input, cache and output tokens),
 * once per message ID (a message's content blocks are written as lines of their own, with its usage).
 *
 * @param files The transcript files.
 * @returns The tokens reported so far.
 */
export async function claudeTokens(files: string[]): Promise<number> {
  const byMessage = new Map<string, number>();
  let n = 0;
  for (const line of await jsonLines(files)) {
    const message = line.message as Record<string, unknown> | undefined;
    if (line.type !== "assistant" || !message || typeof message.usage !== "object" || !message.usage) {
      continue;
    }
    const u = message.usage as Record<string, unknown>;
    const tokens = count(u.input_tokens) + count(u.cache_creation_input_tokens) +
      count(u.cache_read_input_tokens) + count(u.output_tokens);
    byMessage.set(typeof message.id === "string" ? message.id : `line-${n++}`, tokens);
  }
  let total = 0;
  for (const t of byMessage.values()) total += t;
  return total;
}

/**
 * The tokens of Codex's rollouts: the last `token_count` event's total usage (input and output tokens) of
 * each rollout file.
 *
 * @param files The rollout files.
 * @returns The tokens reported so far.
 */
export async function codexTokens(files: string[]): Promise<number> {
  let total = 0;
  for (const file of files) {
    let last = 0;
    for (const line of await jsonLines([file])) {
      const payload = line.payload as Record<string, unknown> | undefined;
      if (line.type !== "event_msg" || payload?.type !== "token_count") continue;
      const usage = (payload.info as Record<string, unknown> | null)?.total_token_usage as
        | Record<string, unknown>
        | undefined;
      if (usage) last = count(usage.input_tokens) + count(usage.output_tokens);
    }
    total += last;
  }
  return total;
}

/** How far a program has gone in model responses, for `limits.steps`. */
export interface ProgramSteps {
  /** The model responses so far. */
  responses: number;
  /** True when the last response asked for a tool, so that another model request follows. */
  toolPending: boolean;
}

/** The item types of a Codex rollout's `response_item` lines that are a call of a tool. */
const CODEX_CALLS = ["function_call", "custom_tool_call", "local_shell_call", "web_search_call"];

/**
 * The model responses of Codex's rollouts: one `token_count` event (with its usage) ends each response; the
 * response asked for a tool when a tool call is among the items it wrote, and no assistant message followed.
 *
 * @param files The rollout files.
 * @returns The responses so far, and whether the last asked for a tool.
 */
export async function codexSteps(files: string[]): Promise<ProgramSteps> {
  let responses = 0;
  let called = false;
  let toolPending = false;
  for (const line of await jsonLines(files)) {
    const payload = line.payload as Record<string, unknown> | undefined;
    if (line.type === "response_item") {
      if (CODEX_CALLS.includes(String(payload?.type))) called = true;
      else if (payload?.type === "message" && payload.role === "assistant") called = false;
    } else if (line.type === "event_msg" && payload?.type === "token_count" && payload.info) {
      responses++;
      toolPending = called;
      called = false;
    }
  }
  return { responses, toolPending };
}
