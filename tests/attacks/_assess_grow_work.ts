/**
 * The work of assessments_grow_attacks_test.ts that is measured in a process of its own (`measuredInChild`): an
 * assessment added through the file store while the run's program holds `assessments.jsonl` locked, and makes it
 * a sparse file of `bytes` before it lets go (after the store looked at its size, before it reads it).
 * @module
 */
import { join } from "node:path";
import { FileStore } from "../../lib/provevi/store/file_store.ts";

/** Measured: what the store said of the assessment, and the file's size after. */
export function assess(runs: string, runId: string, bytes: number) {
  return async () => {
    await using store = new FileStore({ runs });
    const path = join(runs, runId, "assessments.jsonl");
    await store.assess(runId, "correct", true);
    const held = await Deno.open(path, { read: true, write: true });
    await held.lock(true);
    const said = store.assess(runId, "score", 1).then(
      () => "added",
      (error) => `refused: ${(error as Error).message}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    await held.truncate(bytes);
    await held.unlock();
    held.close();
    return { said: await said, size: (await Deno.stat(path)).size };
  };
}

/** Measured: the problems of the run's whole check (their codes), and the assessments the store gives (or why not). */
export async function verify(runs: string, runId: string) {
  const { verifyRun } = await import("../../lib/provevi/runs/verify_run.ts");
  await using store = new FileStore({ runs });
  const check = await verifyRun(await store.readRun(runId), { store });
  const given = await store.assessments(runId).then((a) => a.length, (error) => (error as Error).message);
  return { problems: check.problems.map((p) => p.code), given };
}
