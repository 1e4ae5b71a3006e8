/**
 * Attacks on the files of a log's folder (a store's `.log/`) and a witness's state: anyone who can write the
 * folder puts, where a checkpoint, the key, the witnessed checkpoint, a tile, an entry bundle, the pending file
 * or a witness's state belongs, a sparse file past what such a file can hold, or a FIFO. Each was read whole
 * (`Deno.readTextFile`): a file of many gigabytes took the reader's memory, and a FIFO held it for ever. Now each
 * read refuses the file before it reads a byte, with one line that names it (`log_file_read.ts`).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ProveviError } from "../../lib/provevi/evidence/errors.ts";
import { LOG_NOTE_MAX_BYTES, LOG_TILE_MAX_BYTES } from "../../lib/provevi/log/log_file_read.ts";
import { entriesPath, tilePath } from "../../lib/provevi/log/tiles.ts";
import { fakeLeaf, tempLog } from "../provevi/log/_log_fixtures.ts";
import { FileLog } from "../../lib/provevi/log/file_log.ts";
import { Witness } from "../../lib/provevi/log/witness.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("log file attacks");

/** Puts a sparse file of `size` bytes at `path`, in place of what was there. */
async function sparse(path: string, size: number): Promise<void> {
  await Deno.remove(path).catch(() => {});
  using file = await Deno.open(path, { write: true, create: true });
  await file.truncate(size);
}

/** Runs `read` and counts it: stopped when it fails with one line naming `path`, before reading the file. */
async function refused(
  name: string,
  path: string,
  read: () => Promise<unknown>,
  says: RegExp,
): Promise<void> {
  let error: unknown = null;
  try {
    await read();
  } catch (e) {
    error = e;
  }
  const message = error instanceof Error ? error.message : "";
  const stopped = error instanceof ProveviError && says.test(message) && !message.includes("\n");
  tally.add(name, { stopped, recorded: stopped && message.includes(path) });
  assert.ok(stopped && message.includes(path), `${name}: ${String(error)}`);
}

Deno.test("files of a log's folder past what they can hold are refused before a byte is read", async () => {
  const { log, dir } = await tempLog();
  try {
    await log.append([fakeLeaf(1), fakeLeaf(2), fakeLeaf(3)]);
    const tlog = join(dir, "runs", ".log", "tlog");
    const big = /more than the \d+ a reader takes/;
    const cases: [string, string, number, () => Promise<unknown>][] = [
      ["a checkpoint", join(tlog, "checkpoint"), LOG_NOTE_MAX_BYTES + 1, () => log.checkpoint()],
      ["the witnessed checkpoint", join(dir, "runs", ".log", "witnessed"), 2 ** 30, () => log.witnessed()],
      [
        "a hash tile",
        join(tlog, tilePath({ level: 0, index: 0, width: 3 })),
        LOG_TILE_MAX_BYTES + 1,
        () => log.readTiles([{ level: 0, index: 0, width: 3 }]),
      ],
      ["an entry bundle", join(tlog, entriesPath(0, 3)), 4 * 2 ** 30, () => log.readEntries(0, 3)],
      // the pending file past the cap is not read either, and no longer stops the append: the append cuts it
      // (log_plant_attacks_test.ts)
    ];
    for (const [name, path, size, read] of cases) {
      const was = await Deno.readFile(path).catch(() => null);
      await sparse(path, size);
      await refused(`${name} of ${size} bytes`, path, read, big);
      await Deno.remove(path);
      if (was !== null) await Deno.writeFile(path, was); // each case with the others' files intact
    }
    const key = (await new FileLog(join(dir, "runs")).key())!;
    const state = join(dir, "witness-state");
    await Deno.mkdir(state);
    const witness = new Witness({
      name: "w.test/1",
      seed: new Uint8Array(32).fill(7),
      state,
      logs: [key.verifier],
    });
    const origin = sha256Hex("an origin");
    await sparse(join(state, origin), LOG_NOTE_MAX_BYTES + 1);
    await refused("a witness's state", join(state, origin), () => witness.latest(origin), big);
  } finally {
    log.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a log's key or checkpoint that is a FIFO is refused, not waited on", async () => {
  const { log, dir } = await tempLog();
  try {
    await log.append([fakeLeaf(1)]);
    for (
      const [name, path, read] of [
        ["the key", join(dir, "runs", ".log", "key"), () => new FileLog(join(dir, "runs")).key()],
        ["a checkpoint", join(dir, "runs", ".log", "tlog", "checkpoint"), () => log.checkpoint()],
      ] as const
    ) {
      await Deno.remove(path);
      const made = await new Deno.Command("mkfifo", { args: [path] }).output();
      assert.ok(made.success, "mkfifo");
      await refused(`${name} as a FIFO`, path, read, /is not a plain file/);
    }
  } finally {
    log.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/** Replaces a log's `index.db` with a file made by `sql`. */
async function hostileIndex(dir: string, sql: string): Promise<string> {
  const path = join(dir, "runs", ".log", "index.db");
  for (const end of ["", "-wal", "-shm"]) await Deno.remove(path + end).catch(() => {});
  const db = new DatabaseSync(path);
  db.exec(sql);
  db.close();
  return path;
}

const ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c)";

Deno.test("an index.db whose table is a view of endless rows is not read: the entries are", async () => {
  const { log, dir } = await tempLog();
  try {
    await log.append([fakeLeaf(1), fakeLeaf(2), fakeLeaf(3)]);
    log.close();
    await hostileIndex(
      dir,
      `CREATE VIEW provevi_log_index AS ${ENDLESS} SELECT '${fakeLeaf(2).run_id}' AS run_id, x AS idx FROM c;
       CREATE TABLE provevi_log_indexed (id INTEGER PRIMARY KEY CHECK (id = 1), size INTEGER NOT NULL);`,
    );
    const reader = new FileLog(join(dir, "runs"));
    const found = await reader.indexOf(fakeLeaf(2).run_id);
    reader.close();
    tally.add("an index.db view of endless rows", { stopped: found === 1, recorded: found === 1 });
    assert.equal(found, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an index.db with a trigger that loops is made again by the next append, not run", async () => {
  const { log, dir } = await tempLog();
  try {
    await log.append([fakeLeaf(1)]);
    log.close();
    const path = await hostileIndex(
      dir,
      `CREATE TABLE provevi_log_index (
        run_id TEXT NOT NULL, idx INTEGER NOT NULL, PRIMARY KEY (run_id, idx)
      ) WITHOUT ROWID;
      CREATE TABLE provevi_log_indexed (id INTEGER PRIMARY KEY CHECK (id = 1), size INTEGER NOT NULL);
      CREATE TRIGGER loop AFTER INSERT ON provevi_log_index BEGIN SELECT count(*) FROM (${ENDLESS} SELECT x FROM c); END;`,
    );
    const writer = new FileLog(join(dir, "runs"));
    await writer.append([fakeLeaf(2)]);
    const found = await writer.indexOf(fakeLeaf(2).run_id);
    writer.close();
    const db = new DatabaseSync(path);
    const triggers = db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all();
    db.close();
    const ok = found === 1 && triggers.length === 0;
    tally.add("an index.db with a looping trigger", { stopped: ok, recorded: ok });
    assert.ok(ok, JSON.stringify({ found, triggers }));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("log file attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
