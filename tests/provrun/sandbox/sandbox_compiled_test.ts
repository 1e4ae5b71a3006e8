/**
 * The sandbox of a compiled provr: provr started again with the sandbox role's argument, with the flags the
 * compile task bakes in (through `deno run` on cli/provr.ts, as the binary runs it), holding the tools in a
 * worker narrowed to the run's grants; and the role's own protocol, which no tool can speak.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Sandbox } from "../../../lib/provrun/sandbox/sandbox.ts";
import { ToolSetError } from "../../../lib/provrun/run/errors.ts";
import { compiledProvrFlags, selfCommand } from "./_self.ts";

Deno.test("a compiled provr's sandbox process is provr itself in the sandbox role: zod tools, grants and time limit hold", async () => {
  const folder = await Deno.makeTempDir();
  await Deno.mkdir(join(folder, "run", "output"), { recursive: true });
  await Deno.mkdir(join(folder, "tools"));
  const module = join(folder, "tools", "rates.ts");
  await Deno.writeTextFile(
    module,
    `import { z } from "zod";
export const TOOLS = [{ name: "add", description: "adds", schema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }: { a: number; b: number }) => { console.log("adding"); return a + b; } },
  { name: "busy", description: "spins", schema: { type: "object" }, execute: () => { for (;;) {} } }];`,
  );
  const sandbox = await Sandbox.open(join(folder, "run"), {
    modules: [pathToFileURL(module).href],
    self: selfCommand(),
    toolSeconds: 30,
  });
  try {
    assert.equal(sandbox.mode, "self");
    assert.ok(
      compiledProvrFlags().includes("--allow-read"),
      "the compiled provr reads anything: the worker narrows",
    );
    assert.deepEqual(await sandbox.callWithConsole("add", { a: 2, b: 3 }), { value: 5, console: "adding\n" });
    await sandbox.call("write_file", { path: "/output/a.txt", content: "x" });
    assert.equal(await Deno.readTextFile(join(folder, "run", "output", "a.txt")), "x");
    await assert.rejects(() => sandbox.call("read_file", { path: "/etc/passwd" }), /PathRefused/);
    await assert.rejects(
      () => sandbox.call("busy", {}, { seconds: 1 }),
      (e: Error) => e.name === "ToolTimeout",
    );
    assert.equal(await sandbox.call("add", { a: 1, b: 1 }), 2); // a fresh process after the kill
    assert.equal(sandbox.stats.terminated, 1);
  } finally {
    await sandbox.close();
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("a compiled provr that may not start itself refuses the agent's tools in one line that says how", async () => {
  const folder = await Deno.makeTempDir();
  try {
    await assert.rejects(
      () => Sandbox.open(folder, { self: [join(folder, "no-provr-here")] }),
      (error: Error) => {
        assert.ok(error instanceof ToolSetError, String(error));
        assert.match(error.message, /cannot be started \(NotFound\): put provr on the PATH as provr/);
        assert.equal(error.message.includes("\n"), false);
        return true;
      },
    );
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});
