/**
 * The child of no_follow_test: run with --allow-read and --allow-write only (as every command runs, with its
 * permission set, where Deno's node:fs drops O_NOFOLLOW), it opens the paths of a folder it is given in every
 * way through `openAtPathSync` (the one open that follows no link) and prints one JSON line per try: what
 * happened, and whether the victim file kept its bytes.
 * @module
 */
import fs from "node:fs";
import { join } from "node:path";
import { nodeOpener, openAtPathSync } from "../../../lib/provevi/evidence/open_file.ts";

const { O_RDONLY, O_WRONLY, O_APPEND, O_CREAT, O_TRUNC, O_NONBLOCK } = fs.constants;
const dir = Deno.args[0]!;
const victim = join(dir, "victim");
const tries: [string, string, number][] = [
  ["read through a link", "link", O_RDONLY | O_NONBLOCK],
  ["append through a link", "link", O_WRONLY | O_APPEND],
  ["cut through a link", "link", O_WRONLY | O_CREAT | O_TRUNC],
  ["make through a dangling link", "dangling", O_WRONLY | O_CREAT | O_TRUNC],
  ["read a plain file", "plain", O_RDONLY],
  ["cut a plain file", "plain", O_WRONLY | O_CREAT | O_TRUNC],
  ["make a new file", "new", O_WRONLY | O_CREAT | O_TRUNC],
];
for (const [what, name, flags] of tries) {
  let result: string;
  try {
    const { opened: fd } = openAtPathSync(
      join(dir, name),
      { create: (flags & O_CREAT) !== 0 },
      nodeOpener(flags & ~O_CREAT & ~O_TRUNC),
    );
    if (flags & O_TRUNC) fs.ftruncateSync(fd, 0);
    if (flags & (O_WRONLY | O_APPEND)) fs.writeSync(fd, new TextEncoder().encode("written"));
    fs.closeSync(fd);
    result = "opened";
  } catch (error) {
    result = (error as Error).name === "IrregularFile" ? "refused" : String(error);
  }
  const kept = Deno.readTextFileSync(victim) === "the user's own\n";
  const made = (() => {
    try {
      Deno.lstatSync(join(dir, "nowhere"));
      return true;
    } catch {
      return false;
    }
  })();
  console.log(JSON.stringify({ what, result, kept, made }));
}
