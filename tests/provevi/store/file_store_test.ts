import assert from "node:assert/strict";
import { join } from "node:path";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import { EvidenceError, RunNotFound } from "../../../lib/provevi/evidence/errors.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { storeContract } from "./store_contract.ts";

storeContract("FileStore", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provevi-file-" });
  return { store: new FileStore({ runs }), runs };
});

Deno.test("FileStore: a line is in events.jsonl before append returns", async () => {
  const runs = await Deno.makeTempDir();
  const writer = await new FileStore({ runs }).openRun("run-a");
  const chain = new EventChain("run-a");
  const next = chain.next({ type: "run_created", component: "RunContext", actor: "me" });
  await writer.append(next.line, next.event);
  assert.equal(await Deno.readTextFile(join(runs, "run-a", "evidence", "events.jsonl")), next.line + "\n");
  await Deno.remove(runs, { recursive: true });
});

Deno.test("FileStore: a seal that cannot write the manifest fails", async () => {
  const runs = await Deno.makeTempDir();
  const writer = await new FileStore({ runs }).openRun("run-b");
  // the run folder gone (evidence/ alone removed is made again, its events put back: seal_plant_attacks_test)
  await Deno.remove(join(runs, "run-b"), { recursive: true });
  await assert.rejects(() => writer.seal(), EvidenceError);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("FileStore: a run ID that names a link under the runs root is refused", async () => {
  const runs = await Deno.makeTempDir();
  const store = new FileStore({ runs });
  await (await store.openRun("run-real")).seal();
  await Deno.symlink(join(runs, "run-real"), join(runs, "run-fake"));
  await assert.rejects(() => store.readRun("run-fake"), RunNotFound);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("FileStore: a large payload is whole in payloads/ when putPayload settles, stored once when given twice at once, and in the manifest", async () => {
  const runs = await Deno.makeTempDir();
  const writer = await new FileStore({ runs }).openRun("run-large");
  const chain = new EventChain("run-large");
  const bytes = new Uint8Array(1024 * 1024).map((_, i) => i % 251);
  const [a, b] = await Promise.all([writer.putPayload(bytes), writer.putPayload(bytes.slice())]);
  assert.equal(a, b);
  assert.deepEqual(await Deno.readFile(join(runs, "run-large", "evidence", "payloads", a)), bytes);
  for (const type of ["run_created", "run_completed"]) {
    const next = chain.next({
      type,
      component: "RunContext",
      actor: "me",
      payload: type === "run_created" ? a : null,
    });
    await writer.append(next.line, next.event);
    chain.accept(next);
  }
  const manifest = await writer.seal();
  assert.deepEqual(manifest.payloads, [{ sha256: a, size: bytes.length }]);
  assert.equal(a, sha256Hex(bytes));
  await Deno.remove(runs, { recursive: true });
});
