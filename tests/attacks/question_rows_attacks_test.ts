/**
 * `prove access` and the inputs of `prove show` ask a sqlite store for a run's grants, refusals and inputs: a
 * view with a row for each ref of each such event, read with the event's line (its texts as the run wrote them).
 * A tampered store's rows can make the reading hold far more than the run: an event's line of 16 MiB, given
 * 200 refs (200 rows of the view), was read 200 times at once (some 5 GiB), and URIs of 4 MiB each, as many.
 * Each question must hold about what the run's evidence may hold (an event's line once, the refs' URIs up to
 * the bound of a run's text), and past that refuse in one line that says the store was changed.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { measuredInChild } from "./_setup.ts";
import { Tally } from "./_tally.ts";
import { tamperedStore } from "./_question_rows_work.ts";

const tally = new Tally("question rows attacks");
const MiB = 1024 * 1024;

Deno.test("a store's question of one run holds an event's line once, whatever refs the rows give it", async () => {
  const cases = [
    // seq 2 is the grant, seq 5 the staged input
    {
      name: "a grant of 16 MiB with 200 refs",
      question: "access",
      seq: 2,
      bytes: 16 * MiB,
      refs: 200,
      uriBytes: 0,
    },
    {
      name: "an input of 16 MiB with 200 refs",
      question: "inputs",
      seq: 5,
      bytes: 16 * MiB,
      refs: 200,
      uriBytes: 0,
    },
    // past the bound of a row's text: refused, in one line, before the line leaves the store
    { name: "a grant's line of 40 MiB", question: "access", seq: 2, bytes: 40 * MiB, refs: 1, uriBytes: 0 },
  ] as const;
  for (const c of cases) {
    const dir = await Deno.makeTempDir({ prefix: "attack-question-rows-" });
    try {
      const path = await tamperedStore(dir, c);
      const { grew, ms, got } = await measuredInChild<{ rows?: number; threw?: string }>(
        "./_question_rows_work.ts",
        "askRun",
        path,
        join(dir, "runs"),
        c.question,
      );
      console.log(`${c.name}: ${Math.round(grew / MiB)} MiB more memory, ${ms} ms, ${JSON.stringify(got)}`);
      // the rows come (the event is the run's, as its line says), in bounded memory; past a row's bound, a
      // refusal that says the store was changed
      const refused = c.bytes > 32 * MiB;
      const said = refused
        ? /^ProveviError: .*seq 2\) whose line is longer than .*the store file was changed/.test(
          got.threw ?? "",
        )
        : got.rows === c.refs;
      const ok = said && grew < 256 * MiB;
      tally.add(c.name, { stopped: ok, recorded: said });
      assert.ok(ok, `${c.name}: ${Math.round(grew / MiB)} MiB, ${JSON.stringify(got)} (${SAMPLE_RUN_ID})`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
  console.log(tally.line());
});
