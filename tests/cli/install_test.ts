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
    // Every installed command starts under its flags: provtrace too, whose imports read variables at load.
    for (
      const [name, args] of [["provr", ["--help"]], ["provtrace", ["runs", "--db", join(root, "none.db")]]]
    ) {
      const r = await new Deno.Command(join(root, "bin", name as string), {
        args: args as string[],
        env: { PATH: `${Deno.execPath().replace(/\/[^/]+$/, "")}:${Deno.env.get("PATH") ?? ""}` },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const err = new TextDecoder().decode(r.stderr);
      assert.doesNotMatch(err, /Uncaught|NotCapable|\n\s+at /, `${name}: ${err}`);
      assert.ok(r.code === 0 || err.trim().split("\n").length === 1, `${name}: ${err}`);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("deno task install and deno task compile give each command exactly the flags of its task", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))).tasks as Record<string, string>;
  for (const name of ["prove", "provr", "provtrace"]) {
    const flags = tasks[name]!.replace(/^deno run /, "").replace(` cli/${name}.ts`, "").replace(
      "INIT_CWD,",
      "",
    );
    assert.ok(tasks.install!.includes(`${flags} -n ${name} cli/${name}.ts`), `install ${name}`);
    // A compiled binary starts itself again (provr's sandbox, provtrace's query) and never the Deno CLI it
    // does not need: its --allow-run is the task's, with its own name, less what only runs from source needs.
    const step = tasks.compile!.split("&&").find((s) => s.includes(`-o dist/${name} cli/${name}.ts`));
    assert.ok(step, `compile ${name}`);
    const words = step.trim().split(/\s+/);
    const compiled = words.slice(words.indexOf("compile") + 1, words.indexOf("-o"))
      .filter((w) => !w.startsWith("--include"));
    const runs = (list: string[]) =>
      new Set(list.find((w) => w.startsWith("--allow-run="))?.slice(12).split(","));
    const given = flags.split(" ");
    const own = runs(compiled), task = runs(given);
    for (const program of own) {
      assert.ok(task.has(program) || program === name, `compile ${name}: ${program}`);
    }
    for (const program of task) {
      assert.ok(own.has(program) || program === "deno", `compile ${name}: ${program}`);
    }
    const other = (list: string[]) => list.filter((w) => !w.startsWith("--allow-run="));
    assert.deepEqual(other(compiled), other(given), `compile ${name}`);
  }
});
