/**
 * Attacks on `prove export` (exportRun) by what changes a run folder after its check: the source run verifies,
 * then a process the run left behind puts a link to a file of the user's, or a FIFO, in place of an output or as
 * `bundle.json`. The copy used `Deno.copyFile`, which followed the link (the user's file went into the target
 * store) or waited on the FIFO for ever. Each file is now opened once, following no link and waiting on no FIFO:
 * the copy is refused in one line and taken back, and the source is left as it was.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { exportRun } from "../../lib/provevi/runs/export_run.ts";
import { writeRun } from "../provevi/_run.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("export swap attacks");
const ID = "run-20261202T000000Z-0000000e";
const SECRET = "the user's secret\n";

const PLANTS: Record<string, (folder: string, secret: string) => Promise<void>> = {
  "a link to a file of the user's in place of an output": async (folder, secret) => {
    await Deno.remove(join(folder, "output", "answer.txt"));
    await Deno.symlink(secret, join(folder, "output", "answer.txt"));
  },
  "a FIFO in place of an output": async (folder) => {
    await Deno.remove(join(folder, "output", "answer.txt"));
    assert.ok(
      (await new Deno.Command("mkfifo", { args: [join(folder, "output", "answer.txt")] }).output()).success,
    );
  },
  "a link to a file of the user's as bundle.json": (folder, secret) =>
    Deno.symlink(secret, join(folder, "bundle.json")),
  "a FIFO as bundle.json": async (folder) => {
    assert.ok((await new Deno.Command("mkfifo", { args: [join(folder, "bundle.json")] }).output()).success);
  },
};

for (const [plant, make] of Object.entries(PLANTS)) {
  Deno.test(`exportRun with ${plant}, put there after the source verified, copies nothing of it and does not wait`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "attack-export-swap-" });
    const secret = join(dir, "secret");
    await Deno.writeTextFile(secret, SECRET);
    const runs = join(dir, "runs");
    await writeRun(join(runs, ID), ID);
    await using from = new FileStore({ runs });
    await using target = new FileStore({ runs: join(dir, "to") });
    // the plant comes once the source has verified: when the copy opens its run in the target store
    const openRun = target.openRun.bind(target);
    target.openRun = async (...args: Parameters<typeof openRun>) => {
      await make(join(runs, ID), secret);
      return await openRun(...args);
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<"waited">((resolve) => timer = setTimeout(() => resolve("waited"), 60_000));
    const result = await Promise.race([
      exportRun(ID, { from, to: target }).then(
        (c) => `copied (${c.ok})`,
        (e: Error) => `refused: ${e.message}`,
      ),
      waited,
    ]).finally(() => clearTimeout(timer));
    // a copy left waiting on the FIFO is let go: opening it both ways never waits
    if (result === "waited") {
      for (const p of ["output/answer.txt", "bundle.json"]) {
        try {
          Deno.openSync(join(runs, ID, p), { read: true, write: true }).close();
        } catch { /* not the FIFO */ }
      }
    }
    const copied = await Array.fromAsync(walk(join(dir, "to")));
    const leaked = copied.some((text) => text === SECRET);
    tally.add(plant, { stopped: !leaked && result !== "waited", recorded: result.startsWith("refused") });
    assert.notEqual(result, "waited", "the copy waited on the FIFO");
    assert.ok(!leaked, "the user's file was copied into the target store");
    assert.match(result, /^refused: .*(is a link|is a FIFO|not a plain file)/);
    assert.equal(result.split("\n").length, 1);
    assert.equal(await Deno.readTextFile(secret), SECRET);
    await Deno.remove(dir, { recursive: true });
  });
}

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) yield* walk(path);
    else if (e.isFile) yield await Deno.readTextFile(path).catch(() => "");
  }
}

Deno.test("export swap attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
