import { join } from "node:path";
import { assert, assertEquals } from "../provcat/_assert.ts";
import { git, makeRepo } from "../provcat/_helpers.ts";
import { bufferIo } from "../../cli/_io.ts";
import { provr } from "../../cli/provr.ts";
import { prove } from "../../cli/prove.ts";
import { commitBundle } from "../../lib/provevi/runs/bundle.ts";
import { Catalog } from "../../lib/provcat/catalog.ts";
import { writeRun } from "../provevi/_run.ts";
import { removeWritable } from "../_files.ts";

async function withSetup(fn: (dir: string, config: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "provr-catalog-" });
  try {
    await makeRepo(join(dir, "lake"), { "evals/revenue.csv": "q,a\n" });
    const config = join(dir, "provcat.yaml");
    await Deno.writeTextFile(
      config,
      `cache: cache\nstores:\n  lake: { type: git, path: lake }\nroutes:\n  - { prefix: "data://acme/risk/dev", store: lake }\n  - { prefix: "run://acme/demo/dev", store: lake, path: runs }\n`,
    );
    await fn(dir, config);
  } finally {
    await removeWritable(dir);
  }
}

Deno.test("provr catalog pin, put, commit, ls and snapshot work on a git repository", async () => {
  await withSetup(async (dir, config) => {
    const run = async (...args: string[]) => {
      const io = bufferIo();
      const code = await provr(["catalog", "--config", config, ...args], io);
      return { code, out: io.text(), err: io.stderr.join("\n") };
    };
    const head = await git(join(dir, "lake"), "rev-parse", "HEAD");
    assertEquals(await run("pin", "data://acme/risk/dev/evals"), {
      code: 0,
      out: `data://acme/risk/dev/evals?at=commit:${head}`,
      err: "",
    });
    await Deno.writeTextFile(join(dir, "notes.txt"), "n\n");
    assertEquals((await run("put", "data://acme/risk/dev/notes.txt", join(dir, "notes.txt"))).code, 0);
    const committed = await run("commit", "data://acme/risk/dev/notes.txt", "-m", "add notes", "--json");
    const pinned = JSON.parse(committed.out).pinned as string;
    assert(pinned.startsWith("data://acme/risk/dev/notes.txt?at=commit:"));
    assertEquals(await git(join(dir, "lake"), "log", "-1", "--format=%s"), "add notes");
    const ls = await run("ls", "data://acme/risk/dev");
    assertEquals(ls.out.split("\n").map((l) => l.split(/\s+/).pop()), ["evals", "notes.txt"]);
    const snap = JSON.parse((await run("snapshot", "data://acme/risk/dev/evals", "--json")).out);
    assertEquals(Object.keys(snap).sort(), ["kind", "path", "pinned", "reused", "sha256", "uri"]);
    assertEquals(await Deno.readTextFile(join(snap.path, "revenue.csv")), "q,a\n");
  });
});

Deno.test("provr catalog errors are one line, provr: …, with exit code 1", async () => {
  await withSetup(async (_dir, config) => {
    for (
      const [args, part] of [
        [["pin", "run://nowhere/x/dev/r"], "no route covers"],
        [["pin", "data://acme"], "has no domain"],
        [["pin", "data://acme/risk/dev/missing"], "is not in store"],
        [["--config", "/nonexistent.yaml", "pin", "data://a/b/c/x"], "does not exist"],
      ] as const
    ) {
      const io = bufferIo();
      const code = await provr(
        ["catalog", ...(args[0] === "--config" ? [] : ["--config", config]), ...args],
        io,
      );
      assertEquals(code, 1);
      assertEquals(io.stderr.length, 1);
      assert(io.stderr[0]!.startsWith("provr: ") && io.stderr[0]!.includes(part), io.stderr[0]);
    }
  });
});

Deno.test("prove verify and provr verify take --config, --bundle and --require-bundle", async () => {
  await withSetup(async (dir, config) => {
    const id = "run-20261129T120000Z-0badc0de";
    const folder = await writeRun(join(dir, "runs", id), id);
    const catalog = await Catalog.open({ configPath: config });
    const bundle = await commitBundle(catalog, folder, `run://acme/demo/dev/${id}`);
    await catalog.close();
    for (const command of [prove, provr]) {
      const io = bufferIo();
      assertEquals(await command(["verify", folder, "--config", config], io), 0);
      assertEquals(
        io.text(),
        `${id}: the evidence, the outputs and the committed bundle ${bundle.pinned} verify\n` +
          "  note: the run is not signed",
      );
      const none = bufferIo();
      assertEquals(await command(["verify", folder, "--config", join(dir, "missing.yaml")], none), 1);
      // A --config given must be a catalog config, whatever the run needs.
      assert(none.stderr.join("\n").includes("missing.yaml"), none.stderr.join("\n"));
    }
    await Deno.remove(join(folder, "bundle.json"));
    const required = bufferIo();
    assertEquals(await provr(["verify", folder, "--config", config, "--require-bundle"], required), 1);
    // The seed's error, not a verdict: the run lacks only the bundle that is required.
    assertEquals(required.stdout, []);
    assertEquals(required.stderr, ["provr: no committed bundle to compare with, and a bundle is required"]);
    const json = bufferIo();
    assertEquals(await prove(["verify", folder, "--config", config, "--require-bundle", "--json"], json), 1);
    const verdict = JSON.parse(json.stdout.join("\n"));
    assertEquals([verdict.ok, verdict.problems.map((p: { code: string }) => p.code)], [false, [
      "bundle.required",
    ]]);
    const given = bufferIo();
    assertEquals(await provr(["verify", folder, "--config", config, "--bundle", bundle.pinned!], given), 0);
  });
});
