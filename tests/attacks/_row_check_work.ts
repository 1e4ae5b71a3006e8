/**
 * The work of row_check_attacks_test.ts measured in a process of its own (`measuredInChild`): the check of a
 * tampered store's rows of a run (`checkRun`, which first completes the rows of a run that missed its seal).
 * The store is opened first, unmeasured.
 * @module
 */
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { PostgresStore } from "../../lib/provevi/postgres/postgres_store.ts";
import { sqlitePath } from "../../lib/provevi/store/store_uri.ts";

/**
 * Opens the store (`sqlite:////<path>` or a postgres URI) over `runs`; then, measured, checks the run's rows and
 * gives how many problems it found, the first problem that `answer` (a regular expression's source) matches as
 * `<code> <message>`, and the first three; or what the check threw, as `threw`.
 */
export async function checkRun(uri: string, runs: string, runId: string, answer: string) {
  const store = uri.startsWith("sqlite://")
    ? new SqliteStore(sqlitePath(uri), { runs })
    : await PostgresStore.open(uri, { runs });
  return async () => {
    try {
      const found = (await store.checkRun(runId)).map((p) => `${p.code} ${p.message}`);
      return {
        count: found.length,
        match: found.find((f) => new RegExp(answer).test(f)) ?? null,
        first: found.slice(0, 3).map((f) => f.slice(0, 300)),
      };
    } catch (error) {
      return { threw: String((error as Error).stack ?? error).slice(0, 2000) };
    }
  };
}
