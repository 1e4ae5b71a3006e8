/**
 * The work of latest_run_attacks_test.ts that is measured in a process of its own (`measuredInChild`): `latest`
 * resolved in a file store where two runs began in one second, one of whose events.jsonl was made a sparse file
 * after its first line.
 * @module
 */
import { join } from "node:path";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { EvidenceRecorder } from "../../lib/provrun/run/recorder.ts";
import { resolveRunRef } from "../../lib/provevi/runs/resolve_run_ref.ts";

/** Two sealed runs of one second, the one begun first with the ID that sorts last. */
export async function twoRuns(runs: string, bytes: number): Promise<string[]> {
  const store = new FileStore({ runs });
  const ids = ["run-20261203T100000Z-ffffffff", "run-20261203T100000Z-00000000"];
  for (const id of ids) {
    const writer = await store.openRun(id);
    const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
    await recorder.record({ type: "run_created", component: "RunContext", data: {} });
    await recorder.seal();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  // anyone who writes the folder appends `bytes` of lines of a MiB (a line past 16 MiB is refused as it is read)
  const file = await Deno.open(join(runs, ids[0]!, "evidence", "events.jsonl"), { append: true });
  const chunk = new Uint8Array(1024 * 1024).fill(0x78);
  chunk[chunk.length - 1] = 0x0a;
  for (let written = 0; written < bytes; written += chunk.length) await file.write(chunk);
  file.close();
  return ids;
}

/** Measured: the run `latest` names. */
export function latest(runs: string) {
  return async () => await resolveRunRef(new FileStore({ runs }), "latest");
}
