/**
 * Attacks on the viewer's digest cache (`viewer/digest_cache.ts`): a run's verdict is kept while a stamp of its
 * files is unchanged, so a file the check reads that the stamp does not look at could be changed under a kept
 * "verified". Each change below makes the run's check fail; the runs page must say so at the next refresh
 * (stopped), while an unchanged run is still kept (recorded: the cache still caches), unless it has more files than
 * a stamp looks at (2,000): a file changed in place there passed for verified until the digest's time ran out
 * (30 s), and such a run is now checked each time.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/policy.ts";
import { DigestCache, RACY_MS } from "../../lib/provevi/viewer/digest_cache.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../provevi/_sample_run.ts";
import { sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("digest cache attacks");
const policy = TelemetryPolicy.parse(
  "version: 1\ndestinations:\n  browser:\n    kind: live\n    receives: bodies\n",
);

/** Each change: what it does to the sealed run's folder once its verdict is kept. */
const CHANGES: [string, (folder: string) => Promise<void>, { outputs?: number }][] = [
  [
    "a line that is no assessment appended to assessments.jsonl (outside evidence/ and output/)",
    (folder) =>
      Deno.writeTextFile(join(folder, "assessments.jsonl"), "not an assessment\n", { append: true }),
    {},
  ],
  [
    "an output changed in place in a run of 2,002 outputs (more files than a stamp looks at)",
    (folder) => Deno.writeTextFile(join(folder, "output", "extra-7.txt"), "output X\n"),
    { outputs: 2001 },
  ],
];

for (const [change, make, { outputs }] of CHANGES) {
  Deno.test(`the runs page's kept verdict of a run is checked again after ${change}`, async () => {
    const run = outputs === undefined ? await sampleRun("attack-digest-cache-") : await bigRun(outputs);
    try {
      const store = new FileStore({ runs: join(run.dir, "runs") });
      let checks = 0;
      const counted = Object.assign(Object.create(store) as FileStore, {
        readRun: async (runId: string) => {
          const record = await store.readRun(runId);
          const manifestText = record.manifestText.bind(record);
          return Object.assign(record, { manifestText: () => (checks++, manifestText()) });
        },
      });
      const cache = new DigestCache(counted, { policy });
      // past the racy window, so that the verdict is kept
      await new Promise((resolve) => setTimeout(resolve, RACY_MS + 100));
      const before = (await cache.digest(SAMPLE_RUN_ID)).verdict;
      const once = checks;
      await cache.digest(SAMPLE_RUN_ID);
      const kept = checks === once;
      await make(run.folder);
      const after = (await cache.digest(SAMPLE_RUN_ID)).verdict;
      // a run of more files than a stamp looks at is checked each time: no stamp would see the change
      const keeps = outputs === undefined;
      tally.add(change, {
        stopped: after === "does_not_verify",
        recorded: before === "verified" && kept === keeps,
      });
      assert.equal(before, "verified");
      assert.equal(
        kept,
        keeps,
        keeps ? "an unchanged run's verdict is kept" : "a run of many files is not kept",
      );
      assert.equal(after, "does_not_verify");
      await store.close();
    } finally {
      await Deno.remove(run.dir, { recursive: true });
    }
  });
}

/** A sealed sample run with `outputs` more outputs, in a file store of its own. */
async function bigRun(outputs: number): Promise<{ dir: string; folder: string }> {
  const dir = await Deno.makeTempDir({ prefix: "attack-digest-cache-" });
  const store = new FileStore({ runs: join(dir, "runs") });
  await writeSampleRun(await store.openRun(SAMPLE_RUN_ID), { extraOutputs: outputs });
  await store.close();
  return { dir, folder: join(dir, "runs", SAMPLE_RUN_ID) };
}

Deno.test("digest cache attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
