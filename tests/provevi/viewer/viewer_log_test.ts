/**
 * The run page's log panel: the viewer says whether a run is in its store's log, at which index, under which
 * checkpoint and with whose cosignatures, and says so in Chromium.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { Witness } from "../../../lib/provevi/log/witness.ts";
import { cosignLatest } from "../../../lib/provevi/log/witness_client.ts";
import { serveWitness } from "../../../lib/provevi/log/witness_server.ts";
import { serveViewer, viewerHandler } from "../../../lib/provevi/viewer/viewer_server.ts";
import type { RunLogView } from "../../../lib/provevi/viewer/run_log_view.ts";
import { writeRun } from "../_run.ts";
import { launch, openPage, screenshot } from "./_browser.ts";
import { peerTest } from "../../_peers.ts";

const PORT = 5124;
const TOKEN = "c".repeat(64);
const A = "run-20261201T000000Z-0000000a";
const B = "run-20261201T000000Z-0000000b";

async function logOf(store: FileStore, run: string): Promise<RunLogView> {
  const handle = viewerHandler(store, { policy: TelemetryPolicy.denyAll(), port: PORT, token: TOKEN });
  const r = await handle(
    new Request(`http://127.0.0.1:${PORT}/t/${TOKEN}/api/runs/${run}/log`, {
      headers: { host: `127.0.0.1:${PORT}` },
    }),
  );
  assert.equal(r.status, 200);
  return await r.json();
}

/** Two runs in a file store's log, the log cosigned by one witness. */
async function loggedStore(): Promise<{ store: FileStore; runs: string }> {
  const runs = join(await Deno.makeTempDir({ prefix: "viewer-log-" }), "runs");
  for (const id of [A, B]) await writeRun(join(runs, id), id);
  const store = new FileStore({ runs });
  const witness = new Witness({
    name: "witness.test/w1",
    seed: new Uint8Array(randomBytes(32)),
    state: await Deno.makeTempDir({ prefix: "viewer-witness-" }),
    logs: [(await store.log.key())!.verifier],
  });
  await using server = serveWitness(witness, { port: 0 });
  await cosignLatest(store.log, [server.url]);
  return { store, runs };
}

Deno.test("api/runs/:run/log says where a run is in the log, its proof's checkpoint and who cosigned the log", async () => {
  const { store } = await loggedStore();
  const view = await logOf(store, B);
  assert.equal(view.kept, true);
  assert.equal(view.index, 1);
  assert.equal(view.log?.latest.size, 2);
  assert.deepEqual(view.log?.witnessed?.cosigned_by, ["witness.test/w1"]);
  assert.equal(view.proof?.index, 1);
  assert.equal(view.proof?.size, 2);
  assert.equal(view.proof?.proves, true);
  assert.equal(view.proof?.log_signed, true);
  assert.equal(view.problem, null);
});

Deno.test("api/runs/:run/log names a run the log lacks, and a proof that no longer proves its run", async () => {
  const { store, runs } = await loggedStore();
  // A proof copied from another run: it proves that run, not this one.
  await Deno.copyFile(join(runs, B, "log.tlog-proof"), join(runs, A, "log.tlog-proof"));
  const copied = await logOf(store, A);
  assert.equal(copied.index, 0);
  assert.equal(copied.proof?.proves, false);
  // A run folder put into the store by hand: never sealed through it, so not in its log.
  const c = "run-20261201T000000Z-0000000c";
  await writeRun(join(await Deno.makeTempDir(), "elsewhere", c), c).then((f) =>
    Deno.rename(f, join(runs, c))
  );
  await Deno.remove(join(runs, c, "log.tlog-proof"));
  const lacking = await logOf(store, c);
  assert.equal(lacking.index, null);
  assert.equal(lacking.proof, null);
});

peerTest("chromium", {
  name: "the run page shows the run's leaf in the log and the witnesses of the log in Chromium",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const { store } = await loggedStore();
    await using viewer = await serveViewer(store, { policy: TelemetryPolicy.denyAll(), port: 0 });
    await using browser = await launch();
    const { page, errors } = await openPage(browser);
    await page.goto(new URL(`runs/${B}`, viewer.url).href, { waitUntil: "networkidle0" });
    await page.waitForSelector('#log-panel [data-log-index="1"]');
    const text = await page.$eval("#log-panel", (e) => e.textContent ?? "");
    assert.match(text, /Leaf 1 of provevi\.local\/file\/[0-9a-f]{16}, which holds 2 runs\./);
    assert.match(text, /Witnessed: the checkpoint of 2 runs is cosigned by witness\.test\/w1\./);
    assert.match(text, /signed by the store's log key/);
    await screenshot(page, "run-log-panel", { docs: false });
    assert.deepEqual(errors, []);
  },
});
