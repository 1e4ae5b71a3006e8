/**
 * The viewer's compare data has the step-aligned difference `prove diff` finds (`api/compare`'s `diff`), cut to
 * the viewer's level: at `bodies` each difference quotes where the content differs; below it, only what differs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { compareDiff } from "../../../lib/provevi/viewer/compare_diff.ts";
import { serveViewer } from "../../../lib/provevi/viewer/viewer_server.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";

const RUN = (answer: string) =>
  RunFile.parse(`run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: q
  backend: call
  model: "test:"
  script: { turns: [{ text: "${answer}", usage: { input: 3, output: 2 } }] }
prompt: What is six times seven?
`);

const policy = (receives: string) =>
  TelemetryPolicy.fromDict({ version: 1, destinations: { browser: { kind: "live", receives } } });

Deno.test("compareDiff() gives the step-aligned difference, its content only at bodies; api/compare serves it", async () => {
  const runs = await Deno.makeTempDir({ prefix: "compare-diff-" });
  const store = new FileStore({ runs });
  try {
    const a = await runFile(RUN("forty-two"), { store });
    const b = await runFile(RUN("forty-three"), { store });
    const ids = [a.runId, b.runId];
    const full = await compareDiff(store, ids, ["bodies", "bodies"]);
    assert.equal(full.level, "bodies");
    const answer = full.differences.find((d) => d.what === "model_answer")!;
    assert.deepEqual([answer.phase, answer.step], ["step", 1]);
    assert.match(answer.detail, /"forty-two" vs "forty-three"/);
    const names = await compareDiff(store, ids, ["bodies", "names"]);
    assert.equal(names.level, "names");
    assert.ok(names.differences.length > 0);
    for (const d of names.differences) {
      assert.equal(d.path, null);
      assert.ok(!/forty/.test(d.detail), d.detail);
    }
    await using viewer = await serveViewer(store, { policy: policy("bodies"), port: 0 });
    const response = await fetch(new URL(`api/compare?a=${a.runId}&b=${b.runId}`, viewer.url));
    assert.equal(response.status, 200, await response.clone().text());
    const served = await response.json();
    assert.deepEqual(served.diff.first, full.first);
  } finally {
    await store.close();
    await Deno.remove(join(runs), { recursive: true });
  }
});
