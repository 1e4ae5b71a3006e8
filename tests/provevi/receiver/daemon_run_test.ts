import assert from "node:assert/strict";
import { join } from "node:path";
import { closeLock, type HeldLockFile, storeStateNow } from "../../../lib/provevi/receiver/daemon_run.ts";
import { openInStore, tempStore } from "./_daemon.ts";

Deno.test("storeStateNow() sees a run sealed in the store at the next request, though it looked for the manifest a moment before", async () => {
  await using t = await tempStore();
  const { writer, recorder } = await openInStore(t.store, "run-20261202T120000Z-0000d1a0");
  const record = await t.store.readRun(writer.runId);
  const lock: HeldLockFile = { file: null };
  try {
    assert.equal(await storeStateNow(record, lock), "live");
    assert.notEqual(lock.noManifestAt ?? null, null); // a look that stands for a few milliseconds
    assert.equal(await storeStateNow(record, lock), "live");
    // the seal names the manifest and lets go of the writer's lock: the free lock sends the next look to the store
    await recorder.seal();
    assert.equal(await storeStateNow(record, lock), "sealed");
  } finally {
    closeLock(lock);
  }
});

Deno.test("storeStateNow() looks for the manifest again once its last look is a few milliseconds old, while the writer's lock is held", async () => {
  await using t = await tempStore();
  const { writer } = await openInStore(t.store, "run-20261202T120000Z-0000d1a1");
  const record = await t.store.readRun(writer.runId);
  const evidence = join(writer.folder, "evidence");
  const lock: HeldLockFile = { file: null };
  try {
    assert.equal(await storeStateNow(record, lock), "live");
    Deno.writeTextFileSync(join(evidence, "manifest.json"), "{}"); // a manifest, the lock still held
    lock.noManifestAt = performance.now() - 1000;
    assert.equal(await storeStateNow(record, lock), "sealed");
    assert.equal(lock.noManifestAt, null);
  } finally {
    closeLock(lock);
  }
});
