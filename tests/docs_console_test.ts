/**
 * The docs run as written: every ```console block of README.md and of each docs/*.md this test finds (in name
 * order) is run, command by command, and its output compared with the doc, in the manner of cram and trycmd.
 *
 * The rules, kept simple so that anyone writing a guide can follow them:
 *
 * - Each file runs in its own scratch home: `HOME` is a new empty folder, and the commands run in a scratch
 *   project folder whose `cli/`, `lib/`, `fixtures/`, `mod.ts`, `deno.json` and `deno.lock` are links to this
 *   checkout, so `deno task prove …` works there and a file a command writes lands in the scratch folder. The
 *   project folder keeps its path from file to file, emptied of all but its links before each: Deno's code
 *   cache knows a module by its path, so the commands of every file after the first load the commands'
 *   modules compiled already (a new path for each file made each file's first `prove`, `provr` and `provtrace`
 *   compile them all again). A file's blocks run in order, so a later block sees what an earlier one made.
 *   Only `HOME`, `PATH`, `DENO_DIR`, `USER` and `TERM=dumb` are set.
 * - A line `$ COMMAND` is run with `sh -c`, standard error merged into standard output. A line that follows it
 *   and starts with `> ` continues the command (a here-document, say), without the `> `. Each command runs in a
 *   shell of its own, but a line that only sets a variable (`$ S=sqlite:///evidence.db`) is kept for the
 *   commands after it. The line `Task NAME …` that `deno task` prints first is dropped.
 * - The lines after a command, up to the next `$ ` line or the end of the block, are its expected output; a
 *   blank line between two commands is dropped. The exit code is not compared: a documented refusal is output.
 * - In expected output, `[..]` matches any text within a line, and a line that is `...` matches any number of
 *   lines (none too). Before comparing, both sides have run IDs written as `run-[ID]` and times (RFC 3339, UTC)
 *   as `[TIME]`, and the output has the scratch home written as `~` and the scratch project as `.`.
 * - A block preceded by the line `<!-- docs-test: skip (why) -->` (blank lines may come between) is not run:
 *   for a block that needs a server, a secret or a browser, or is only an illustration.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { consoleBlocks, matches } from "./_console.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const LINKED = ["cli", "lib", "fixtures", "mod.ts", "deno.json", "deno.lock"];

async function docFiles(): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(join(ROOT, "docs"))) if (e.name.endsWith(".md")) names.push(e.name);
  return ["README.md", ...names.sort().map((n) => `docs/${n}`)];
}

/** The folder of this test's scratch homes and its one scratch project, made at the first file's start. */
let scratchBase: string | null = null;

/** A new empty home, and the scratch project emptied of all but its links to this checkout. */
async function scratch(): Promise<{ home: string; project: string }> {
  if (scratchBase === null) {
    const base = scratchBase = await Deno.makeTempDir({ prefix: "docs-test-" });
    await Deno.mkdir(join(base, "project"));
    for (const name of LINKED) await Deno.symlink(join(ROOT, name), join(base, "project", name));
    globalThis.addEventListener("unload", () => Deno.removeSync(base, { recursive: true }));
  }
  const home = join(scratchBase, "home");
  const project = join(scratchBase, "project");
  await Deno.remove(home, { recursive: true }).catch(() => {});
  await Deno.mkdir(home);
  for await (const e of Deno.readDir(project)) {
    if (!LINKED.includes(e.name)) await Deno.remove(join(project, e.name), { recursive: true });
  }
  return { home, project };
}

async function runStep(
  command: string,
  where: { home: string; project: string },
  variables: string[],
): Promise<string[]> {
  const out = await new Deno.Command("sh", {
    args: ["-c", `exec 2>&1\n${variables.join("\n")}\n${command}`],
    cwd: where.project,
    clearEnv: true,
    env: {
      HOME: where.home,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache", "deno"),
      USER: "ada",
      TERM: "dumb",
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(180_000),
  }).output();
  const text = new TextDecoder().decode(out.stdout)
    .replaceAll(where.home, "~")
    .replaceAll(where.project, ".");
  const lines = text.split("\n").filter((l, i) => !(i === 0 && /^Task \S+ /.test(l)));
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

Deno.test("consoleBlocks() and matches() follow the rules written at the top of this test", () => {
  const blocks = consoleBlocks(
    "```console\n$ echo a\na\n\n$ cat <<EOF\n> x\n> EOF\nx\n```\n\n<!-- docs-test: skip (a server) -->\n\n```console\n$ curl x\n```\n",
  );
  assert.deepEqual(blocks.map((b) => [b.steps.map((s) => [s.command, s.expected]), b.skipped]), [
    [[["echo a", ["a"]], ["cat <<EOF\nx\nEOF", ["x"]]], null],
    [[["curl x", []]], "a server"],
  ]);
  assert.ok(matches(["a", "b", "c"], ["a", "...", "c"]));
  assert.ok(matches(["a", "c"], ["a", "...", "c"]));
  assert.ok(
    matches(["run-20261130T101010Z-0badc0de at 2026-11-30T10:10:10.5Z"], [
      "run-20261129T000000Z-12345678 at [TIME]",
    ]),
  );
  assert.ok(matches(["took 12ms"], ["took [..]"]));
  assert.ok(!matches(["a", "b"], ["a"]));
});

for (const file of await docFiles()) {
  const text = await Deno.readTextFile(join(ROOT, file));
  const blocks = consoleBlocks(text);
  if (!blocks.some((b) => b.skipped === null && b.steps.length)) continue;
  Deno.test(`${file}: every console block runs as written, in order, in a scratch home`, async () => {
    const where = await scratch();
    const variables: string[] = [];
    try {
      for (const block of blocks) {
        if (block.skipped !== null) continue;
        for (const step of block.steps) {
          if (/^[A-Za-z_][A-Za-z0-9_]*=\S*$/.test(step.command)) {
            variables.push(step.command);
            continue;
          }
          const actual = await runStep(step.command, where, variables);
          assert.ok(
            matches(actual, step.expected),
            `${file}:${step.line}: $ ${step.command}\n--- the doc shows:\n${
              step.expected.join("\n")
            }\n--- the command printed:\n${actual.join("\n")}`,
          );
        }
      }
    } finally {
      await scratch(); // what this file made goes now, not at the next file
    }
  });
}
