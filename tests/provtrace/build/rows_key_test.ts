import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ProveviError } from "../../../lib/provevi/evidence/errors.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";
import { checkTrace } from "../../../lib/provtrace/build/check.ts";
import { exportTrace } from "../../../lib/provtrace/export/export.ts";
import { defaultRowsKeyPath, readRowsKey, rowsMac } from "../../../lib/provtrace/db/rows_key.ts";
import { traceRunDigest } from "../../../lib/provtrace/db/run_digest.ts";
import { makeRuns } from "../_runs.ts";

/** The payloads the manifest of a run lists. */
async function payloadsOf(runs: string, runId: string): Promise<string[]> {
  const manifest = JSON.parse(await Deno.readTextFile(join(runs, runId, "evidence", "manifest.json")));
  return manifest.payloads.map((p: { sha256: string }) => p.sha256);
}

Deno.test("a build seals each run's rows with the user's key (mode 0600); check and export trust rows whose MAC holds without reading the evidence again, and --deep reads it", async () => {
  await using t = await makeRuns();
  const db = join(t.root, "trace.db");
  const keyFile = join(t.root, "home", "provtrace", "rows.key");
  const built = await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog, keyFile });
  assert.equal(built.added.length, 2);
  assert.equal((await Deno.stat(keyFile)).mode! & 0o777, 0o600);
  const file = new DatabaseSync(db);
  const macs = file.prepare("SELECT rows_mac FROM trace_sources").all() as { rows_mac: string }[];
  file.close();
  assert.equal(macs.length, 2);
  for (const m of macs) assert.match(m.rows_mac, /^[0-9a-f]{64}$/);
  assert.ok((await checkTrace(db, { catalog: t.catalog, runs: t.runs, keyFile })).ok);

  // A payload lost from the store after the build: the rows still hold the MAC over their digest and the
  // manifest, so check and the export trust them; only --deep (or no key) builds the run again and finds it.
  // The run is of format 2: its small payloads are records of payloads.pack, lost with it.
  assert.ok((await payloadsOf(t.runs, t.agentRun)).length > 0);
  await Deno.remove(join(t.runs, t.agentRun, "evidence", "payloads.pack"));
  const quick = await checkTrace(db, { catalog: t.catalog, runs: t.runs, keyFile });
  assert.ok(quick.ok, JSON.stringify(quick.runs));
  const exported = await exportTrace(db, { kind: "steps", catalog: t.catalog, runs: t.runs, keyFile });
  assert.deepEqual(exported.refused, []);
  const deep = await checkTrace(db, { catalog: t.catalog, runs: t.runs, keyFile, deep: true });
  assert.equal(deep.ok, false);
  assert.notEqual(deep.runs.find((r) => r.run_id === t.agentRun)!.state, "same");
  assert.equal((await checkTrace(db, { catalog: t.catalog, runs: t.runs })).ok, false);
});

Deno.test("a rows key that others may read, or that is not a key, is refused in one line that names the fix", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provtrace-key-" });
  try {
    const path = join(dir, "rows.key");
    assert.equal(await readRowsKey(path), null);
    const key = await readRowsKey(path, { create: true });
    assert.equal(key!.length, 32);
    assert.deepEqual(await readRowsKey(path), key);
    await Deno.chmod(path, 0o644);
    await assert.rejects(() => readRowsKey(path), (e: Error) => {
      assert.ok(e instanceof ProveviError);
      assert.match(e.message, /may be read by others; chmod 600/);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
    await Deno.writeTextFile(path, "not a key\n", { mode: 0o600 });
    await Deno.chmod(path, 0o600);
    await assert.rejects(() => readRowsKey(path), /is not a rows key \(64 hex digits\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the rows key's default place is the user's data folder, and none without a home", () => {
  assert.equal(defaultRowsKeyPath({ HOME: "/home/ada" }), "/home/ada/.local/share/provtrace/rows.key");
  assert.equal(defaultRowsKeyPath({ XDG_DATA_HOME: "/data", HOME: "/home/ada" }), "/data/provtrace/rows.key");
  assert.equal(defaultRowsKeyPath({}), null);
});

Deno.test("a file built before the digest's format 2, its rows sealed over their RFC 8785 digest, is still trusted by the quick check", async () => {
  await using t = await makeRuns();
  const db = join(t.root, "trace.db");
  const keyFile = join(t.root, "home", "provtrace", "rows.key");
  await buildTrace({ store: "file", runs: t.runs, db, catalog: t.catalog, keyFile });
  const key = (await readRowsKey(keyFile))!;
  // As the older build left them: the RFC 8785 digest, and the MAC over it.
  const file = new DatabaseSync(db);
  for (const run of [t.agentRun, t.callRun]) {
    const canonical = traceRunDigest(file, run).canonical;
    const manifest = await Deno.readTextFile(join(t.runs, run, "evidence", "manifest.json"));
    const mac = rowsMac(key, { run_id: run, rows_digest: canonical, manifest_sha256: sha256Hex(manifest) });
    file.prepare("UPDATE trace_sources SET rows_digest = ?, rows_mac = ? WHERE run_id = ?").run(
      canonical,
      mac,
      run,
    );
  }
  file.close();
  // Trusted without building the run again: a payload lost since is seen only by --deep.
  await Deno.remove(join(t.runs, t.agentRun, "evidence", "payloads.pack"));
  const quick = await checkTrace(db, { catalog: t.catalog, runs: t.runs, keyFile });
  assert.ok(quick.ok, JSON.stringify(quick.runs));
  assert.equal((await checkTrace(db, { catalog: t.catalog, runs: t.runs, keyFile, deep: true })).ok, false);
});

Deno.test("rowsMac is HMAC-SHA256 (RFC 2104) of the seal's RFC 8785 JSON, for keys of any length", async () => {
  const { createHmac, randomBytes } = await import("node:crypto");
  const canonicalize = (await import("canonicalize")).default;
  const seal = {
    run_id: "run-20261129T120000Z-0badc0de",
    rows_digest: "ab".repeat(32),
    manifest_sha256: "cd".repeat(32),
  };
  for (const length of [1, 32, 63, 64, 65, 100]) {
    const key = new Uint8Array(randomBytes(length));
    const expected = createHmac("sha256", key).update(canonicalize(seal)!).digest("hex");
    assert.equal(rowsMac(key, seal), expected, `a key of ${length} bytes`);
    assert.equal(rowsMac(key, seal), expected, `a key of ${length} bytes, its pads made already`);
    assert.notEqual(rowsMac(key, { ...seal, rows_digest: "ef".repeat(32) }), expected);
    // The same array with other bytes in it is another key: its pads are not the old key's.
    key[0] = key[0]! ^ 1;
    assert.equal(
      rowsMac(key, seal),
      createHmac("sha256", key).update(canonicalize(seal)!).digest("hex"),
      `a key of ${length} bytes, changed in place`,
    );
  }
  // No key at all is HMAC's empty key, as createHmac takes it.
  const empty = new Uint8Array(0);
  assert.equal(rowsMac(empty, seal), createHmac("sha256", empty).update(canonicalize(seal)!).digest("hex"));
});
