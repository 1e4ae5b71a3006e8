/**
 * The work of tool_read_attacks_test.ts measured in a process of its own (`measuredInChild`): the built-in tools
 * `read_file` and `grep_file` on a run folder's inputs.
 * @module
 */
import { FS_TOOLS, toolContext } from "../../lib/provrun/sandbox/fs_tools.ts";

const tool = (name: string) => FS_TOOLS.find((t) => t.name === name)!;

/** Measured: `read_file` of `path` in the run folder `root`: the answer's length and its last line. */
export async function read(root: string, path: string) {
  const text = await tool("read_file").execute({ path } as never, toolContext(root, "c1")) as string;
  return { length: text.length, last: text.slice(text.lastIndexOf("\n") + 1) };
}

/** Measured: `grep_file` of `pattern` under `/input` in the run folder `root`. */
export async function grep(root: string, pattern: string) {
  const found = await tool("grep_file").execute({ pattern } as never, toolContext(root, "c2")) as {
    path: string;
    line: number;
    text: string;
  }[];
  return found.map((f) => ({ ...f, text: f.text.slice(0, 80), length: f.text.length }));
}
