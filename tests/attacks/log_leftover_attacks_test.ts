/**
 * Attacks on what the file log's next appender finishes for a killed one: the entry bundle one past the committed
 * size and the pending file, which anyone who can write the log's folder can leave without the log's key. A leaf
 * there whose run ID is a path (`../elsewhere/run-x`), with a "sealed run" made for it outside the runs root,
 * had the next honest appender sign it into the log (the audit then named it `log.added`). A leaf names a run by
 * its ID, so a leaf whose `run_id` is not one is no leaf: it is dropped, and nothing outside the store is read.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { auditStoreLog } from "../../lib/provevi/runs/store_log.ts";
import { bundleBytes } from "../../lib/provevi/log/log_storage.ts";
import { leafBytes, parseLeaf, type RunLeaf } from "../../lib/provevi/log/run_leaf.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { writeRun } from "../provevi/_run.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("log leftover attacks");
const ids = [0, 1, 2].map((i) => `run-20261201T000000Z-0000000${i}`);

/** A store of three logged runs, and a "sealed run" outside its runs root whose manifest names a path as run ID. */
async function setup(runId: string) {
  const dir = await Deno.makeTempDir({ prefix: "log-leftover-" });
  const runs = join(dir, "runs");
  for (const id of ids) await writeRun(join(runs, id), id);
  const store = new FileStore({ runs });
  const outside = join(runs, runId);
  await Deno.mkdir(join(outside, "evidence"), { recursive: true });
  const manifest = JSON.stringify({ run_id: runId, last_hash: "0".repeat(64) }) + "\n";
  await Deno.writeTextFile(join(outside, "evidence", "manifest.json"), manifest);
  const leaf: RunLeaf = {
    run_id: runId,
    manifest_sha256: sha256Hex(manifest),
    last_hash: "0".repeat(64),
    attestation_sha256: null,
  };
  return { dir, runs, store, outside, leaf };
}

/** The run IDs the log's entries name, after one more honest run is sealed. */
async function afterNextSeal(s: Awaited<ReturnType<typeof setup>>): Promise<string[]> {
  await writeRun(join(s.runs, "run-20261201T000000Z-000000f2"), "run-20261201T000000Z-000000f2");
  const size = (await s.store.log.indexOf("run-20261201T000000Z-000000f2"))! + 1;
  return (await s.store.log.readEntries(0, size)).map((e) => {
    try {
      return parseLeaf(e).run_id;
    } catch {
      return "(not a leaf)";
    }
  });
}

for (
  const runId of ["../evil/run-x", "../evil/../evil2/run-20261201T000000Z-0000abcd", "run-x/../../evil3"]
) {
  Deno.test(`a leaf naming "${runId}" left past the committed size is not appended by the next appender`, async () => {
    const s = await setup(runId);
    const entries = await s.store.log.readEntries(0, 3);
    const past = join(s.store.log.dir, "tlog", "tile", "entries", "000.p", "4");
    await Deno.writeFile(past, bundleBytes([...entries, leafBytes(s.leaf)]));
    const named = await afterNextSeal(s);
    const problems = (await auditStoreLog(s.store)).problems.map((p) => p.code);
    const stopped = !named.includes(runId) && named.length === 4;
    tally.add(`bundle past the size, run_id ${runId}`, { stopped, recorded: problems.length === 0 });
    assert.ok(stopped, named.join(", "));
    assert.deepEqual(problems, []);
    await Deno.remove(s.dir, { recursive: true });
  });

  Deno.test(`a leaf naming "${runId}" in the pending file, with its folder, is not appended by the next appender`, async () => {
    const s = await setup(runId);
    const line = { index: 3, folder: s.outside, leaf: new TextDecoder().decode(leafBytes(s.leaf)) };
    await Deno.writeTextFile(join(s.store.log.dir, "pending.jsonl"), JSON.stringify(line) + "\n");
    const named = await afterNextSeal(s);
    const problems = (await auditStoreLog(s.store)).problems.map((p) => p.code);
    const stopped = !named.includes(runId) && named.length === 4;
    tally.add(`pending line, run_id ${runId}`, { stopped, recorded: problems.length === 0 });
    assert.ok(stopped, named.join(", "));
    assert.deepEqual(problems, []);
    await Deno.remove(s.dir, { recursive: true });
  });
}

Deno.test("a leaf left past the committed size whose run's manifest.json is a named pipe does not keep the next seal waiting", async () => {
  const runId = "run-20261201T000000Z-0000f1f0";
  const s = await setup("../unused/run-x");
  const manifest = join(s.runs, runId, "evidence", "manifest.json");
  await Deno.mkdir(join(s.runs, runId, "evidence"), { recursive: true });
  assert.ok((await new Deno.Command("mkfifo", { args: [manifest] }).output()).success, "mkfifo");
  const leaf = { ...s.leaf, run_id: runId };
  const entries = await s.store.log.readEntries(0, 3);
  const past = join(s.store.log.dir, "tlog", "tile", "entries", "000.p", "4");
  await Deno.writeFile(past, bundleBytes([...entries, leafBytes(leaf)]));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<"waited">((resolve) => timer = setTimeout(() => resolve("waited"), 60_000));
  const named = await Promise.race([afterNextSeal(s), waited]).finally(() => clearTimeout(timer));
  // a reader left waiting on the pipe is let go: opening it both ways never waits
  Deno.openSync(manifest, { read: true, write: true }).close();
  const stopped = named !== "waited" && !named.includes(runId) && named.length === 4;
  tally.add("bundle past the size, its run's manifest a named pipe", {
    stopped,
    recorded: named !== "waited",
  });
  assert.ok(stopped, named === "waited" ? "the seal waited a minute" : named.join(", "));
  await Deno.remove(s.dir, { recursive: true });
});

Deno.test("the log leftover attack tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
