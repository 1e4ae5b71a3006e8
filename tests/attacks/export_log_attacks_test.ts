/**
 * A copy that fails part way never reaches the target's log (issue #28): `exportRun` takes back a failed copy,
 * folder and rows, and a leaf appended for it would name a run the store no longer holds (`log.added` in every
 * audit after). The copy is made to fail part way by output paths too long for the target's deeper folder; the
 * target's log must then be as it was, and its audit clean. The tally is printed at the end.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import type { Json } from "../../lib/provevi/evidence/event.ts";
import type { EvidenceStore } from "../../lib/provevi/store/store.ts";
import { PostgresStore } from "../../lib/provevi/postgres/postgres_store.ts";
import { exportRun } from "../../lib/provevi/runs/export_run.ts";
import { auditStoreLog } from "../../lib/provevi/runs/store_log.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { freshDatabase } from "../provevi/postgres/_pg.ts";
import { Tally } from "./_tally.ts";
import { peerTest } from "../_peers.ts";

const tally = new Tally("failed export attacks");
const id = "run-20261201T000000Z-0000e0a1";

/**
 * A store holding one run that verifies, whose output is nested so deep that its paths fit under PATH_MAX
 * (4,096 bytes) here but not under a target folder 600 bytes deeper: the copy of its output fails.
 */
async function sourceWithDeepOutput(dir: string): Promise<FileStore> {
  const from = new FileStore({ runs: join(dir, "s") });
  const writer = await from.openRun(id);
  const chain = new EventChain(id);
  const add = async (type: string, data: Record<string, Json> = {}) => {
    const next = chain.next({ type, component: "RunContext", actor: "tester", data });
    await writer.append(next.line, next.event);
    chain.accept(next);
  };
  await add("run_created", { agent: "q" });
  const path = [...Array.from({ length: 17 }, (_, i) => `${i}`.padEnd(200, "d")), "result.txt"].join("/");
  await Deno.mkdir(join(writer.folder, "output", dirname(path)), { recursive: true });
  await Deno.writeTextFile(join(writer.folder, "output", path), "42\n");
  await add("output_artifact_created", { path, sha256: sha256Hex("42\n"), size: 3 });
  await add("run_completed");
  await writer.seal();
  assert.deepEqual((await verifyRun(await from.readRun(id))).problems, []);
  return from;
}

/** A target runs root 600 bytes deeper than the source's. */
function deeper(dir: string): string {
  return join(dir, "t".repeat(200), "u".repeat(200), "v".repeat(200));
}

async function failedExport(kind: string, target: (dir: string) => Promise<EvidenceStore>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "export-log-attack-" });
  try {
    const from = await sourceWithDeepOutput(dir);
    await using to = await target(dir);
    const before = await to.log!.checkpoint();
    await assert.rejects(() => exportRun(id, { from, to }), /too long/i);
    const audit = await auditStoreLog(to);
    const after = await to.log!.checkpoint();
    const inLog = await to.log!.indexOf(id);
    tally.add(`failed export into a ${kind} store`, {
      stopped: audit.problems.length === 0 && inLog === null && after === before,
      recorded: !(await to.runIds()).includes(id),
    });
    assert.deepEqual(audit.problems, []);
    assert.equal(inLog, null);
    assert.equal(after, before);
    assert.deepEqual(await to.runIds(), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("an export into a file store that fails part way leaves no leaf, and the audit is clean", async () => {
  await failedExport("file", (dir) => Promise.resolve(new FileStore({ runs: deeper(dir) })));
});

Deno.test("an export into a sqlite store that fails part way leaves no leaf, and the audit is clean", async () => {
  await failedExport(
    "sqlite",
    (dir) => Promise.resolve(new SqliteStore(join(dir, "target.db"), { runs: deeper(dir) })),
  );
});

peerTest("postgres", {
  name: "an export into a postgres store that fails part way leaves no leaf, and the audit is clean",
  fn: async () => {
    const db = await freshDatabase();
    try {
      await failedExport("postgres", (dir) => PostgresStore.open(db.uri, { runs: deeper(dir) }));
    } finally {
      await db.drop();
    }
  },
});

Deno.test("the failed export attack tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
