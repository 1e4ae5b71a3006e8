/**
 * Writes and seals one run into a file store (whose log's folder holds a plant), then prints `sealed <index>`
 * with the run's index in the log, or `refused: <message>`: a seal held by a FIFO never prints. The child of
 * `log_plant_attacks_test.ts`, run under `-P=prove` (as the commands run).
 * Arguments: the runs root, the run ID.
 * @module
 */
import { join } from "node:path";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { writeRun } from "../provevi/_run.ts";

const [runs, runId] = Deno.args as [string, string];
try {
  const store = new FileStore({ runs });
  await writeRun(join(runs, runId), runId, { store });
  console.log(`sealed ${await store.log.indexOf(runId)}`);
} catch (error) {
  console.log(`refused: ${(error as Error).message.split("\n")[0]}`);
}
