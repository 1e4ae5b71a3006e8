import assert from "node:assert/strict";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("deno task install puts prove, provr and provtrace on the PATH with the tasks' flags, and they run", async () => {
  const root = await Deno.makeTempDir({ prefix: "install-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "install"],
      cwd: ROOT,
      env: { DENO_INSTALL_ROOT: root },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    for (const name of ["prove", "provr", "provtrace"]) {
      const shim = await Deno.readTextFile(join(root, "bin", name));
      assert.match(shim, /--no-prompt/, name);
      assert.doesNotMatch(shim, /--allow-all|-A /, name);
    }
    const prove = await new Deno.Command(join(root, "bin", "prove"), {
      args: ["--runs", join(ROOT, "fixtures", "runs"), "runs", "--json"],
      env: { PATH: `${Deno.execPath().replace(/\/[^/]+$/, "")}:${Deno.env.get("PATH") ?? ""}` },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(prove.code, 0, new TextDecoder().decode(prove.stderr));
    assert.equal(
      JSON.parse(new TextDecoder().decode(prove.stdout))[0].run_id,
      "run-20261129T120000Z-0badc0de",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
