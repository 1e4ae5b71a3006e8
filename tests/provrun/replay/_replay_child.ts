/**
 * Replays every run of a runs root, one after the other, and prints one JSON line per replay. The corpus test
 * starts it with no net and no run permission but `cp` (the stager's), and Deno's permission audit on, so that
 * the audit proves what the replays reached. Not a test itself.
 * @module
 */
import { Catalog } from "../../../lib/provcat/catalog.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { replayRun } from "../../../lib/provrun/replay/replay_run.ts";

const [runs] = Deno.args as [string];
const store = new FileStore({ runs });
await using catalog = await Catalog.open({ config: {} });
const sources = (await store.runIds()).slice();
for (const id of sources) {
  try {
    const replay = await replayRun(await store.readRun(id), { store, catalog });
    console.log(JSON.stringify({
      id,
      replay: replay.run.runId,
      identical: replay.identical,
      divergence: replay.divergence,
      served: replay.served,
      status: replay.run.status,
    }));
  } catch (error) {
    console.log(JSON.stringify({ id, error: `${(error as Error).name}: ${(error as Error).message}` }));
  }
}
await store.close();
