import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { installFolder, pathProblems } from "../../cli/install.ts";
import { permissionFlags } from "../../cli/_permissions.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const DENO_FOLDER = dirname(Deno.execPath());

Deno.test("deno task install puts prove, provr and provtrace on the PATH with their permission sets, says where, and they run", async () => {
  const root = await Deno.makeTempDir({ prefix: "install-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "install"],
      cwd: ROOT,
      env: { DENO_INSTALL_ROOT: root, PATH: `${join(root, "bin")}:${DENO_FOLDER}:/usr/bin:/bin` },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const said = new TextDecoder().decode(out.stdout).trim();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.equal(said, `installed prove, provr and provtrace in ${join(root, "bin")}`);
    for (const name of ["prove", "provr", "provtrace"]) {
      const shim = await Deno.readTextFile(join(root, "bin", name));
      const exec = shim.split("\n").find((l) => l.startsWith("exec deno run "))!.split(" ");
      const flags = exec.slice(3, exec.indexOf("--config")).map((w) => w.replace(/^'(.*)'$/, "$1"));
      assert.deepEqual(flags.sort(), [...permissionFlags(name), "--quiet"].sort(), name);
      assert.doesNotMatch(shim, /--allow-all|-A |-P/, name);
    }
    // Typed in a folder of the user's, with an INIT_CWD that a script around it left (npm sets one): an installed
    // command runs where it is typed, as only `deno task` starts it in the project's folder.
    const prove = await new Deno.Command(join(root, "bin", "prove"), {
      args: ["--runs", join(ROOT, "fixtures", "runs"), "runs", "--json"],
      cwd: root,
      env: {
        PATH: `${Deno.execPath().replace(/\/[^/]+$/, "")}:${Deno.env.get("PATH") ?? ""}`,
        INIT_CWD: join(root, "gone"),
      },
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

Deno.test("deno task compile builds each command with the permission set of its task", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))).tasks as Record<string, string>;
  for (const name of ["prove", "provr", "provtrace"]) {
    assert.equal(tasks[name], `deno run -q --no-prompt -P=${name} cli/${name}.ts`);
    assert.match(
      tasks.compile!,
      new RegExp(`deno compile -q --no-prompt -P=${name} [^&]*-o dist/${name} cli/${name}\\.ts`),
    );
  }
});

Deno.test("the install says when Perl's prove, or another command of the same name, comes first on the PATH", async () => {
  const dir = await Deno.makeTempDir({ prefix: "install-path-" });
  try {
    const perl = join(dir, "usr-bin");
    const folder = installFolder({ get: (n) => (n === "DENO_INSTALL_ROOT" ? join(dir, "deno") : undefined) });
    assert.equal(folder, join(dir, "deno", "bin"));
    // A deno of its own on the PATH: this test's Deno may be in npx's folder, which the install does not count.
    const denoFolder = join(dir, "bin");
    for (
      const [where, name] of [
        [perl, "prove"],
        [folder, "prove"],
        [folder, "provr"],
        [folder, "provtrace"],
        [denoFolder, "deno"],
      ]
    ) {
      await Deno.mkdir(where!, { recursive: true });
      await Deno.writeTextFile(join(where!, name!), "#!/bin/sh\n", { mode: 0o755 });
    }
    const shadowed = pathProblems(folder, `${perl}:${folder}:${denoFolder}`);
    assert.deepEqual(shadowed.length, 1, shadowed.join("\n"));
    assert.match(
      shadowed[0]!,
      new RegExp(
        `^prove: ${perl}/prove \\(Perl's test harness, .*\\) comes before ${folder} on the PATH, .*export PATH="${folder}:\\$PATH"`,
      ),
    );
    assert.deepEqual(pathProblems(folder, `${folder}:${perl}:${denoFolder}`), []);
    const absent = pathProblems(folder, `${perl}:${denoFolder}`);
    assert.match(absent.join("\n"), new RegExp(`^${folder} is not on the PATH; add it first: export PATH=`));
    const noDeno = pathProblems(folder, `${folder}:${perl}`);
    assert.match(noDeno.join("\n"), /^deno is not on the PATH, and the installed commands run it/);
    // npx deno@… task install: the deno that npx put on the PATH of this process alone does not count.
    const npx = join(dir, "npm", "_npx", "7a40be787520bede", "node_modules", ".bin");
    await Deno.mkdir(npx, { recursive: true });
    await Deno.writeTextFile(join(npx, "deno"), "#!/bin/sh\n", { mode: 0o755 });
    assert.deepEqual(pathProblems(folder, `${npx}:${folder}:${perl}`), noDeno);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
