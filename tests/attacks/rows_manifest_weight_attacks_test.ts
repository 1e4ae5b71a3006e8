/**
 * An attack on the check of a store's rows of a run (`checkRun`): its events.jsonl removed and its manifest made
 * 110 MiB of many small values (`{"events":1,"lost":[{},{},…]}`). Without the events' lines, the check took the
 * count of events the manifest gives, and parsed it whole with JSON.parse for that, unweighed, at some 30 times
 * its text: the check died. A manifest past EVENTS_READ_WEIGHT now implies no events (stopped), and the check
 * says that the run's events.jsonl is missing (recorded).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { writeRichRun } from "../provevi/_rich_run.ts";
import { measuredInChild } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("rows manifest weight attacks");
const MiB = 1024 * 1024;
const RUN = "run-20261129T120000Z-0000c0de";

Deno.test("a sqlite store's run without events.jsonl and with a manifest of many small values: its rows are checked", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-rows-manifest-weight-" });
  try {
    const path = join(dir, "evidence.db");
    {
      await using store = new SqliteStore(path, { runs: dir });
      await writeRichRun(await store.openRun(RUN));
    }
    const evidence = join(dir, RUN, "evidence");
    await Deno.remove(join(evidence, "events.jsonl"));
    const piece = new TextEncoder().encode("{},".repeat(MiB / 3 | 0));
    {
      using file = await Deno.open(join(evidence, "manifest.json"), { write: true, truncate: true });
      await file.write(new TextEncoder().encode('{"events":1,"lost":['));
      for (let i = 0; i < 110; i++) await file.write(piece);
      await file.write(new TextEncoder().encode("{}]}\n"));
    }
    const checked = await measuredInChild<{ count?: number; match?: string | null; threw?: string }>(
      "./_row_check_work.ts",
      "checkRun",
      `sqlite:///${path}`,
      dir,
      RUN,
      "events\\.jsonl is missing",
    );
    console.log(
      `the check gave ${JSON.stringify(checked.got)} in ${Math.round(checked.grew / MiB)} MiB more memory`,
    );
    tally.add("a manifest of 110 MiB of empty objects", {
      stopped: checked.grew < 1024 * MiB,
      recorded: typeof checked.got.match === "string",
    });
    assert.ok(checked.grew < 1024 * MiB, `the check took ${Math.round(checked.grew / MiB)} MiB`);
    assert.equal(checked.got.threw, undefined);
    assert.match(checked.got.match ?? "", /^rows\.unreadable the run's events\.jsonl is missing/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rows manifest weight attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
