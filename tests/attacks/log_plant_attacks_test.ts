/**
 * Attacks on the files of a file store's log that every seal writes (`.log/pending.jsonl`, `.log/lock`, the next
 * tiles and entry bundle), by
 * anyone who can write the log's folder: a link, a dangling link, a FIFO, a folder, a hard link to a file of the
 * user's, or a sparse file of a gigabyte, planted at the name. Each stopped every later append to the log (a
 * denial of the log for every run: a pending file that was a link or a FIFO was refused by its reader, and the
 * seal with it; a FIFO at the lock held every seal for ever), or wrote through to the file it names (a hard link at
 * the next tile's name had the seal cut the user's file and write the tile into it). The log now
 * moves what is no plain file of its own aside (`<name>.moved-<time>`), makes the file anew, and appends.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeRun } from "../provevi/_run.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("log plant attacks");
const here = new URL(".", import.meta.url).pathname;
const PATIENCE_MS = 120_000;
const USERS = "the user's own\n";

const PLANTS: Record<string, (at: string, top: string) => Promise<void>> = {
  "a link to a file of the user's": (at, top) => Deno.symlink(join(top, "victim"), at),
  "a dangling link": (at, top) => Deno.symlink(join(top, "made"), at),
  "a FIFO": async (at) => {
    assert.ok((await new Deno.Command("mkfifo", { args: [at] }).output()).success);
  },
  "a folder": async (at) => {
    await Deno.mkdir(join(at, "inside"), { recursive: true });
  },
  "a hard link to a file of the user's": (at, top) => Deno.link(join(top, "victim"), at),
  "a sparse file of a gigabyte": async (at) => {
    using file = await Deno.open(at, { write: true, create: true });
    await file.truncate(1024 ** 3);
  },
};

// the names the next seal's tiles take (the log holds two runs: the third leaf makes partial tiles of width 3)
const NAMES = [
  "pending.jsonl",
  "lock",
  "tlog/tile/0/000.p/3",
  "tlog/tile/entries/000.p/3",
  "tlog/checkpoint.tmp",
];
for (const name of NAMES) {
  for (const [plant, make] of Object.entries(PLANTS)) {
    Deno.test(`${plant} planted as the log's ${name} stops no seal and is not written through`, async () => {
      const top = await Deno.makeTempDir({ prefix: "attack-log-plant-" });
      try {
        const runs = join(top, "runs");
        await Deno.writeTextFile(join(top, "victim"), USERS);
        const store = new FileStore({ runs });
        for (const i of [0, 1]) {
          await writeRun(join(runs, `run-20261202T000000Z-0000000${i}`), `run-20261202T000000Z-0000000${i}`, {
            store,
          });
        }
        const at = join(store.log.dir, name);
        await Deno.remove(at).catch(() => {});
        await Deno.mkdir(join(at, ".."), { recursive: true });
        await make(at, top);
        const results: string[] = [];
        for (const i of [2, 3]) {
          const sealer = new Deno.Command(Deno.execPath(), {
            args: [
              "run",
              "-P=prove",
              "--no-prompt",
              join(here, "_log_plant_child.ts"),
              runs,
              `run-20261202T000000Z-0000000${i}`,
            ],
            stdout: "piped",
            stderr: "null",
          }).spawn();
          const timer = setTimeout(() => sealer.kill("SIGKILL"), PATIENCE_MS);
          results.push(new TextDecoder().decode((await sealer.output()).stdout).trim());
          clearTimeout(timer);
        }
        const kept = await Deno.readTextFile(join(top, "victim")) === USERS;
        const made = await Deno.lstat(join(top, "made")).then(() => true, () => false);
        const sealed = results.join(",") === "sealed 2,sealed 3";
        tally.add(`${plant} as ${name}`, { stopped: kept && !made, recorded: sealed });
        assert.deepEqual(results, ["sealed 2", "sealed 3"]);
        assert.ok(kept, "the user's file was written");
        assert.ok(!made, "a file was made where the dangling link points");
      } finally {
        await Deno.remove(top, { recursive: true });
      }
    });
  }
}

Deno.test("log plant attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
