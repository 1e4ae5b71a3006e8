import assert from "node:assert/strict";
import { join } from "node:path";
import { sqliteRowSource } from "../../../lib/provevi/sqlite/sqlite_check.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { checkStoreRows } from "../../../lib/provevi/store/row_check.ts";
import { jsonLineWeight } from "../../../lib/provevi/evidence/json_depth.ts";
import { EVENTS_READ_WEIGHT } from "../../../lib/provevi/evidence/read_events.ts";
import { writeRichRun } from "../_rich_run.ts";

const RUN = "run-20261129T120000Z-0000c0de";
// a line of many small values: some 3 bytes of text each and 96 of the heap once parsed
const DENSE = `{"a":[${"{},".repeat(20_000)}{}]}`;

/**
 * The row check parses the rows and the lines the verifier did not parse, and keeps them: a row or a line of
 * many small values (`{"a":[{},{},…]}`, under a line's 16 MiB) takes some 30 times its text. It weighs them as
 * the verifier weighs its lines, scaled here by `weight` as readEventsText's test scales its own.
 */
async function check(tamper: (store: SqliteStore, dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "provevi-check-weight-" });
  try {
    await using store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
    await writeRichRun(await store.openRun(RUN));
    const lines = (await Deno.readTextFile(join(dir, RUN, "evidence", "events.jsonl"))).split("\n");
    const legit = lines.reduce((n, l) => n + jsonLineWeight(l), 0);
    // a weight the run's own rows and lines pass under twice over, and two dense texts do not
    const weight = 2 * legit + jsonLineWeight(DENSE);
    assert.ok(weight < EVENTS_READ_WEIGHT);
    assert.deepEqual(await checkStoreRows(sqliteRowSource(store.db), RUN, { weight }), []);
    await tamper(store, dir);
    return (await checkStoreRows(sqliteRowSource(store.db), RUN, { weight })).map((p) =>
      `${p.code} ${p.message}`
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("the row check stops at rows of many small values past the weight parsed, in one problem", async () => {
  const got = await check((store) => {
    store.db.prepare("UPDATE provevi_events SET line = ? WHERE run_id = ? AND seq IN (1, 2, 3)").run(
      DENSE,
      RUN,
    );
    return Promise.resolve();
  });
  const last = got.at(-1)!;
  assert.match(
    last,
    /^rows\.unreadable provevi_events \(run_id "run-\S+", seq 2\) would take the check more than \d+ bytes of memory parsed: the rest of the run's rows and lines is not read$/,
  );
  assert.equal(got.filter((p) => p.startsWith("rows.unreadable")).length, 1, got.join("\n"));
});

Deno.test("the row check stops at lines of events.jsonl of many small values past the weight parsed", async () => {
  const got = await check(async (_store, dir) => {
    const path = join(dir, RUN, "evidence", "events.jsonl");
    await Deno.writeTextFile(path, `${DENSE}\n${DENSE}\n${DENSE}\n`, { append: true });
  });
  assert.ok(
    got.some((p) =>
      /^rows\.unreadable line \d+ of events\.jsonl would take the check more than \d+ bytes of memory parsed/
        .test(p)
    ),
    got.join("\n"),
  );
  assert.equal(got.filter((p) => p.startsWith("rows.unreadable")).length, 1, got.join("\n"));
});
