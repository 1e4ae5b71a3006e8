/**
 * `deno publish --dry-run` passes and publishes what users need. Its type check is left out (`--no-check`):
 * `deno task test` type-checks the modules deno.json exports beside the test files (tests/_test_task.ts), and
 * the same graph checked twice cost a fresh clone 20 CPU s more.
 * @module
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("deno publish --dry-run passes offline and publishes what users need: mod.ts, lib/, cli/, the license; no tests, fixtures or benches", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty", "--no-check"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success, text);
  const files = [...text.matchAll(/file:\/\/(\S+) \(/g)].map((m) => m[1]!.slice(ROOT.length));
  for (
    const needed of ["mod.ts", "LICENSE", "README.md", "deno.json", "cli/prove.ts", "lib/provevi/mod.ts"]
  ) {
    assert.ok(files.includes(needed), `${needed} is not published:\n${files.join("\n")}`);
  }
  const extra = files.filter((f) => /^(tests|fixtures|docs|\.ci|\.tools)\//.test(f));
  assert.deepEqual(extra, []);
});
