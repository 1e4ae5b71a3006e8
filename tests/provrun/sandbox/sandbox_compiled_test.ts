/**
 * The compiled provr's sandbox, through `deno run` with the compiled mode forced: `deno` from the PATH on a
 * private copy of the sandbox's own modules (with the toolkit's import map), removed at the close; and with no
 * `deno` to start, one line that says what to install.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Sandbox, ToolSetError } from "../../../lib/provrun/mod.ts";

Deno.test("a compiled provr's sandbox runs on a private copy of its modules, tools modules with zod too, and removes it at the close", async () => {
  const folder = await Deno.makeTempDir();
  await Deno.mkdir(join(folder, "run", "output"), { recursive: true });
  const module = join(folder, "rates.ts");
  await Deno.writeTextFile(
    module,
    `import { z } from "zod";
export const TOOLS = [{ name: "add", description: "adds", schema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }: { a: number; b: number }) => { console.log("adding"); return a + b; } },
  { name: "busy", description: "spins", schema: { type: "object" }, execute: () => { for (;;) {} } }];`,
  );
  const before = new Set([...Deno.readDirSync(Deno.env.get("TMPDIR") ?? "/tmp")].map((e) => e.name));
  const sandbox = await Sandbox.open(join(folder, "run"), {
    modules: [pathToFileURL(module).href],
    compiled: true,
    toolSeconds: 2,
  });
  try {
    assert.equal(sandbox.modulesFrom, "copy");
    const copies = [...Deno.readDirSync(Deno.env.get("TMPDIR") ?? "/tmp")].filter((e) =>
      e.name.startsWith("provr-sandbox-") && !before.has(e.name)
    );
    assert.equal(copies.length, 1);
    const copy = join(Deno.env.get("TMPDIR") ?? "/tmp", copies[0]!.name);
    assert.equal(Deno.statSync(copy).mode! & 0o777, 0o700);
    assert.ok(Deno.statSync(join(copy, "lib/provrun/sandbox/sandbox_child.ts")).isFile);
    const out = await sandbox.callWithConsole("add", { a: 2, b: 3 });
    assert.deepEqual(out, { value: 5, console: "adding\n" });
    await sandbox.call("write_file", { path: "/output/a.txt", content: "x" });
    assert.equal(await Deno.readTextFile(join(folder, "run", "output", "a.txt")), "x");
    await assert.rejects(() => sandbox.call("read_file", { path: "/etc/passwd" }));
    await assert.rejects(() => sandbox.call("busy", {}), /ToolTimeout|took more than/);
    assert.equal(await sandbox.call("add", { a: 1, b: 1 }), 2); // a fresh process after the kill
    await sandbox.close();
    assert.equal(await Deno.stat(copy).then(() => true, () => false), false, "the copy outlived the sandbox");
  } finally {
    await sandbox.close();
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("a compiled provr with no deno to start refuses the agent's tools in one line that says what to install", async () => {
  const folder = await Deno.makeTempDir();
  try {
    await assert.rejects(
      () => Sandbox.open(folder, { compiled: true, denoBin: join(folder, "no-deno-here") }),
      (error: Error) => {
        assert.ok(error instanceof ToolSetError, String(error));
        assert.match(error.message, /install Deno \(https:\/\/deno\.com\) and put deno on the PATH/);
        assert.equal(error.message.includes("\n"), false);
        return true;
      },
    );
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});
