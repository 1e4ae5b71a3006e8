/**
 * The works of rows_events_size_attacks_test.ts that are measured in a process of their own
 * (`measuredInChild`): the reading of a tampered store's events, the check of a store's rows and the seal's
 * columns of a row against a run folder's events.jsonl. Each opens what it reads first, unmeasured.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { PostgresStore } from "../../lib/provevi/postgres/postgres_store.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { sealRowOfFolder } from "../../lib/provevi/store/store_rows.ts";

/**
 * Opens the store (`sqlite://<path>` or a postgres URI) over `runs`; then, measured, reads the run's events from
 * its rows and gives the first problem that `answer` (a regular expression's source) matches, in one line as
 * `<code> <message>`, or the first three problems, or what the reading threw.
 */
export async function readEvents(uri: string, runs: string, runId: string, answer: string) {
  const reading = uri.startsWith("sqlite://")
    ? new SqliteStore(uri.slice("sqlite://".length), { runs })
    : await PostgresStore.open(uri, { runs });
  return async () => {
    try {
      const text = await reading.eventsText(runId);
      const problems = readEventsText(text ?? "").problems;
      assert.ok(problems.length <= 1010, `${problems.length} problems`);
      return problems.map((p) => `${p.code} ${p.message}`).find((f) => new RegExp(answer).test(f)) ??
        JSON.stringify(problems.slice(0, 3));
    } catch (error) {
      return (error as Error).message;
    }
  };
}

/** Opens the sqlite store at `path` over `runs`; then, measured, checks the run's rows: the problems, each a line. */
export function checkRun(path: string, runs: string, runId: string) {
  const store = new SqliteStore(path, { runs });
  return async () => (await store.checkRun(runId)).map((p) => `${p.code} ${p.message}`);
}

/** Measured: the seal's columns of the row of the run folder `runs/<runId>` (`sealRowOfFolder`). */
export function sealRow(runs: string, runId: string) {
  return sealRowOfFolder(join(runs, runId));
}
