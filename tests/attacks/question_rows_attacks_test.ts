/**
 * `prove access` and the inputs of `prove show` ask an indexed store for a run's grants, refusals and inputs: a
 * view with a row for each ref of each such event, which repeats the event's texts (its line in sqlite, its
 * time and data's texts in both) on each of them. A tampered store's rows can make the reading hold far more
 * than the run: a grant whose line is 16 MiB, given 200 refs, was 200 rows of it read at once (3,620 MiB, 54 s
 * in sqlite). Each question must hold an event's texts once (about what the run's evidence may hold), and past
 * the bound of a row refuse in one line that says the store was changed.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { freshDatabase } from "../provevi/postgres/_pg.ts";
import { peerTest } from "../_peers.ts";
import { measuredInChild } from "./_setup.ts";
import { Tally } from "./_tally.ts";
import { deepColumns, type RowChange, tamperedStore } from "./_question_rows_work.ts";

const MiB = 1024 * 1024;

const CASES: (RowChange & { name: string; question: "access" | "inputs" })[] = [
  {
    name: "a grant of 16 MiB with 200 refs",
    question: "access",
    seq: 2,
    field: "mode",
    bytes: 16 * MiB,
    refs: 200,
    uriBytes: 0,
  },
  {
    name: "an input of 16 MiB with 200 refs",
    question: "inputs",
    seq: 5,
    field: "name",
    bytes: 16 * MiB,
    refs: 200,
    uriBytes: 0,
  },
  // past the bound of a row's text: refused, in one line, before the texts leave the store
  {
    name: "a grant's line of 40 MiB",
    question: "access",
    seq: 2,
    field: "mode",
    bytes: 40 * MiB,
    refs: 1,
    uriBytes: 0,
  },
];

for (const kind of ["sqlite", "postgres"] as const) {
  peerTest(kind === "postgres" ? "postgres" : null, {
    name: `a ${kind} store's question of one run holds an event's texts once, whatever refs its rows give it`,
    async fn() {
      const tally = new Tally(`question rows attacks (${kind})`);
      for (const c of CASES) {
        const dir = await Deno.makeTempDir({ prefix: "attack-question-rows-" });
        const db = kind === "postgres" ? await freshDatabase() : null;
        try {
          const uri = await tamperedStore(dir, db?.uri ?? "sqlite", c);
          const { grew, ms, got } = await measuredInChild<{ rows?: number; threw?: string }>(
            "./_question_rows_work.ts",
            "askRun",
            uri,
            join(dir, "runs"),
            c.question,
          );
          console.log(
            `${kind}, ${c.name}: ${Math.round(grew / MiB)} MiB more memory, ${ms} ms, ${JSON.stringify(got)}`,
          );
          // the rows come (the event is the run's), in bounded memory; past a row's bound, a refusal that
          // says the store was changed
          const said = c.bytes > 32 * MiB
            ? /^ProveviError: .*\(seq 2\) whose (line|texts) (is|are) longer than .* (file|rows) (was|were) changed/
              .test(got.threw ?? "")
            : got.rows === c.refs;
          const ok = said && grew < 256 * MiB;
          tally.add(c.name, { stopped: ok, recorded: said });
          assert.ok(ok, `${c.name}: ${Math.round(grew / MiB)} MiB, ${JSON.stringify(got)}`);
        } finally {
          await Deno.remove(dir, { recursive: true });
          await db?.drop();
        }
      }
      console.log(tally.line());
    },
  });
}

for (const kind of ["sqlite", "postgres"] as const) {
  peerTest(kind === "postgres" ? "postgres" : null, {
    name: `a ${kind} store's JSON columns nested 100,000 deep are refused in one line, never a crash`,
    async fn() {
      const dir = await Deno.makeTempDir({ prefix: "attack-question-rows-" });
      const db = kind === "postgres" ? await freshDatabase() : null;
      try {
        const said = await deepColumns(dir, db?.uri ?? "sqlite");
        console.log(`${kind}: ${JSON.stringify(said)}`);
        for (const [question, answer] of Object.entries(said)) {
          assert.match(
            answer,
            /^ProveviError: .* is not JSON: the store('s rows were| file was) changed/,
            question,
          );
        }
      } finally {
        await Deno.remove(dir, { recursive: true });
        await db?.drop();
      }
    },
  });
}
