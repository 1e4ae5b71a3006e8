/**
 * The agent's filesystem tools: `read_file`, `list_files`, `grep_file` (on `/input` and `/output`),
 * `write_file` (on `/output` only) and `note`. They run inside the sandbox's worker, whose Deno permissions
 * are the outer bound; the paths they take are the agent's view (`/input/…`, `/output/…`), mapped here onto
 * the run folder. A `..` segment and any other absolute path are refused before Deno is asked. Deno checks a
 * path's text, not where it leads, so the tools also look at every component on disk: a symbolic link
 * anywhere on the way is refused (never followed), a file with more than one hard link is neither read nor
 * written over, and `write_file` writes a new file and renames it into place, so it replaces a link planted
 * there instead of writing through it.
 * @module
 */
import { basename, dirname, join, posix, relative } from "node:path";
import { PathRefused } from "../run/errors.ts";
import { IrregularFile } from "../../provevi/evidence/open_file.ts";
import { fileLines, readHead } from "./tool_file.ts";
import { checkCitations, type Citation, CITATIONS_SCHEMA } from "./note_citations.ts";

/** A JSON schema, as a tool's input schema. */
export type JsonSchema = { [key: string]: unknown };

/** What a tool's `execute` gets beside its arguments. */
export interface ToolContext {
  /** The tool call's ID. */
  callId: string;
  /** The run folder's `input/`, `output/` and `scratch/` on disk. */
  input: string;
  output: string;
  scratch: string;
  /**
   * Maps an agent path (`/input/a.csv`, `/output/b.txt`) onto the disk.
   * @throws PathRefused for a `..` segment, a path outside the view, or (with `write`) outside `/output`.
   */
  path(agentPath: string, options?: { write?: boolean }): string;
}

/** A tool that runs in the sandbox: a name, a description, an input schema and its function. */
export interface SandboxTool {
  name: string;
  description: string;
  /** A JSON schema, or a zod schema (turned into JSON schema, and used to check the arguments). */
  schema: JsonSchema | unknown;
  /**
   * True when running the tool twice with the same arguments has the effect of running it once, so that a
   * resumed run may run again a call whose result was not recorded (false when not given).
   */
  idempotent?: boolean;
  execute(args: never, ctx: ToolContext): unknown;
}

/**
 * Maps an agent path onto the run folder.
 *
 * @param root The run folder.
 * @param agentPath The path the agent gave, such as `/input/revenue.csv`.
 * @param options `write`: the path must be under `/output`.
 * @returns The path on disk.
 * @throws PathRefused naming the path and the rule.
 * @example
 * ```ts
 * import { agentPath } from "./fs_tools.ts";
 * agentPath("/runs/run-x", "/input/revenue.csv"); // "/runs/run-x/input/revenue.csv"
 * ```
 */
export function agentPath(root: string, agentPath: string, options: { write?: boolean } = {}): string {
  if (typeof agentPath !== "string" || agentPath === "" || agentPath.includes("\0")) {
    throw new PathRefused(String(agentPath), "a path is a text such as /input/data.csv");
  }
  const segments = agentPath.split(/[\\/]+/);
  if (segments.includes("..")) {
    throw new PathRefused(agentPath, "`..` may not be used; name the file from /input or /output");
  }
  const norm = posix.normalize(agentPath.startsWith("/") ? agentPath : `/${agentPath}`);
  const top = norm.split("/")[1] ?? "";
  const allowed = options.write ? ["output"] : ["input", "output"];
  if (!allowed.includes(top)) {
    throw new PathRefused(
      agentPath,
      options.write
        ? "files are written only under /output"
        : "the agent sees only /input/… and /output/…; host paths are not visible",
    );
  }
  return join(root, norm.slice(1));
}

/**
 * Makes the context of one call.
 *
 * @example
 * ```ts
 * import { toolContext } from "./fs_tools.ts";
 * toolContext("/runs/run-x", "c1").path("/output/a.txt", { write: true }); // "/runs/run-x/output/a.txt"
 * ```
 */
export function toolContext(root: string, callId: string): ToolContext {
  return {
    callId,
    input: join(root, "input"),
    output: join(root, "output"),
    scratch: join(root, "scratch"),
    path: (p, o) => agentPath(root, p, o),
  };
}

const MAX_READ = 1024 * 1024;

/**
 * Checks every component of a path under the run folder on disk: none may be a link, and an existing file
 * may have only one hard link.
 *
 * @param ctx The call's context.
 * @param disk The path on disk, from {@linkcode ToolContext.path}.
 * @returns The path's final entry, or null when it does not exist.
 * @throws PathRefused naming the link.
 * @example
 * ```ts ignore
 * await checkOnDisk(ctx, ctx.path("/input/revenue.csv"));
 * ```
 */
/** The longest line `grep_file` tests and gives, in characters: the rest of a longer line is passed over. */
const MAX_LINE = 64 * 1024;

/**
 * A file's first bytes for a tool, and its size, after {@linkcode checkOnDisk}'s look: opened in one step that
 * follows no link and waits on no FIFO (another process of the sandbox may swap one in after the look), refused
 * as the look refuses; no more of it is read than is given.
 */
async function readToolHead(ctx: ToolContext, path: string, most: number) {
  try {
    return await readHead(path, most);
  } catch (error) {
    throw refused(ctx, path, error);
  }
}

/** A file's lines for a tool, opened as {@linkcode readToolHead} opens it, read a piece at a time. */
async function* toolLines(ctx: ToolContext, path: string): AsyncGenerator<string> {
  try {
    yield* fileLines(path, MAX_LINE);
  } catch (error) {
    throw refused(ctx, path, error);
  }
}

function refused(ctx: ToolContext, path: string, error: unknown): unknown {
  return error instanceof IrregularFile ? new PathRefused(viewOf(ctx, path), error.reason) : error;
}

export async function checkOnDisk(ctx: ToolContext, disk: string): Promise<Deno.FileInfo | null> {
  const root = dirname(ctx.input);
  const segments = relative(root, disk).split("/").filter(Boolean);
  let at = root;
  let info: Deno.FileInfo | null = null;
  for (const segment of segments) {
    at = join(at, segment);
    try {
      info = await Deno.lstat(at);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
    if (info.isSymlink) {
      throw new PathRefused(viewOf(ctx, at), "it is a link, and the tools do not follow links");
    }
  }
  if (info?.isFile && (info.nlink ?? 1) > 1) {
    throw new PathRefused(
      viewOf(ctx, disk),
      `the file has ${info.nlink} hard links, so it may be a file outside the run; the tools refuse it`,
    );
  }
  return info;
}

/** The view path of a disk path under the run folder. */
function viewOf(ctx: ToolContext, disk: string): string {
  for (const [view, dir] of [["/input", ctx.input], ["/output", ctx.output]] as const) {
    if (disk === dir) return view;
    if (disk.startsWith(dir + "/")) return view + disk.slice(dir.length);
  }
  return disk;
}

/** The entries under a folder, in name order; a link is given as a link and never followed. */
async function* walk(dir: string): AsyncGenerator<{ path: string; isFile: boolean; isLink: boolean }> {
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(dir)) entries.push(e);
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    const path = join(dir, e.name);
    yield { path, isFile: e.isFile, isLink: e.isSymlink };
    if (e.isDirectory) yield* walk(path);
  }
}

/** The built-in tools, in the order they are offered to the model. */
export const FS_TOOLS: SandboxTool[] = [
  {
    name: "read_file",
    idempotent: true,
    description: "Read a text file from /input or /output. Returns its text (at most 1 MB).",
    schema: {
      type: "object",
      properties: { path: { type: "string", description: "The file, such as /input/data.csv" } },
      required: ["path"],
      additionalProperties: false,
    },
    async execute(args: { path: string }, ctx: ToolContext) {
      const path = ctx.path(args.path);
      await checkOnDisk(ctx, path);
      const { bytes, size } = await readToolHead(ctx, path, MAX_READ);
      const text = new TextDecoder().decode(bytes);
      return size > MAX_READ ? `${text}\n[cut at ${MAX_READ} of ${size} bytes]` : text;
    },
  },
  {
    name: "list_files",
    idempotent: true,
    description: "List the files under a folder of /input or /output (recursively), with their sizes.",
    schema: {
      type: "object",
      properties: { path: { type: "string", description: "The folder, /input by default" } },
      additionalProperties: false,
    },
    async execute(args: { path?: string }, ctx: ToolContext) {
      const dir = ctx.path(args.path ?? "/input");
      await checkOnDisk(ctx, dir);
      const out: { path: string; kind: "file" | "folder" | "link"; size: number }[] = [];
      for await (const e of walk(dir)) {
        const size = e.isFile ? (await Deno.lstat(e.path)).size : 0;
        out.push({ path: viewOf(ctx, e.path), kind: e.isLink ? "link" : e.isFile ? "file" : "folder", size });
      }
      return out;
    },
  },
  {
    name: "grep_file",
    idempotent: true,
    description:
      "Search a file, or every file under a folder, of /input or /output for a regular expression. " +
      "Returns the matching lines with their numbers.",
    schema: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "A JavaScript regular expression" },
        path: { type: "string", description: "A file or folder, /input by default" },
        max_matches: { type: "integer", minimum: 1, description: "At most this many lines (100)" },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
    async execute(args: { pattern: string; path?: string; max_matches?: number }, ctx: ToolContext) {
      const re = new RegExp(args.pattern);
      const start = ctx.path(args.path ?? "/input");
      const max = args.max_matches ?? 100;
      const found = await checkOnDisk(ctx, start);
      if (!found) throw new Deno.errors.NotFound(`${args.path ?? "/input"} does not exist`);
      const files = found.isFile
        ? [start]
        : (await Array.fromAsync(walk(start))).filter((e) => e.isFile).map((e) => e.path);
      const out: { path: string; line: number; text: string }[] = [];
      for (const file of files) {
        if (file !== start) {
          // In a folder, a hard-linked file is skipped as links are; named alone, it is refused.
          const ok = await checkOnDisk(ctx, file).then(() => true, () => false);
          if (!ok) continue;
        }
        if (out.length >= max) break;
        let n = 0;
        for await (const line of toolLines(ctx, file)) {
          n += 1;
          if (re.test(line)) out.push({ path: viewOf(ctx, file), line: n, text: line });
          if (out.length >= max) break;
        }
      }
      return out;
    },
  },
  {
    name: "write_file",
    idempotent: true,
    description: "Write a text file under /output (folders are made as needed). Returns its size.",
    schema: {
      type: "object",
      properties: {
        path: { type: "string", description: "The file, such as /output/answer.txt" },
        content: { type: "string" },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
    async execute(args: { path: string; content: string }, ctx: ToolContext) {
      const path = ctx.path(args.path, { write: true });
      await checkOnDisk(ctx, path);
      await Deno.mkdir(dirname(path), { recursive: true });
      await checkOnDisk(ctx, path); // a link planted while the folders were made
      const bytes = new TextEncoder().encode(args.content);
      // A new file renamed into place: a link planted at the path is replaced, never written through.
      const temp = join(dirname(path), `.${basename(path)}.${crypto.randomUUID()}.tmp`);
      await Deno.writeFile(temp, bytes, { createNew: true });
      await Deno.rename(temp, path);
      return { path: viewOf(ctx, path), bytes: bytes.length };
    },
  },
  {
    name: "note",
    idempotent: true,
    description:
      "Add a note to the run's evidence: a finding, a doubt; with citations of the files or URIs it rests on.",
    schema: {
      type: "object",
      properties: { text: { type: "string" }, citations: CITATIONS_SCHEMA },
      required: ["text"],
      additionalProperties: false,
    },
    async execute(
      args: { text: string; citations?: unknown },
      ctx: ToolContext,
    ): Promise<{ text: string; citations: Citation[] }> {
      if (typeof args.text !== "string" || !args.text.trim()) throw new TypeError("a note needs a text");
      const citations = await checkCitations(args.citations, async (agentPath) => {
        const disk = ctx.path(agentPath);
        const info = await checkOnDisk(ctx, disk);
        if (!info?.isFile) {
          throw new PathRefused(agentPath, "a citation names a file of /input or /output that exists");
        }
        return viewOf(ctx, disk);
      });
      return { text: args.text, citations };
    },
  },
];
