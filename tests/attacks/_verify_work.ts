/**
 * The work of attacks measured in a process of their own (`measuredInChild`) that check a run whole, as
 * `prove verify` and the viewer do.
 * @module
 */
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";

/** Measured: the problems of the run's whole check, each its code and the start of its message. */
export async function verify(runs: string, runId: string) {
  await using store = new FileStore({ runs });
  const check = await verifyRun(await store.readRun(runId), { store });
  return check.problems.map((p) => `${p.code}: ${p.message.slice(0, 200)}`);
}

/** Measured: the seal's columns of the run in `folder` (`sealRowOfFolder`), and its log leaf (`leafOfSeal`). */
export async function sealReaders(folder: string) {
  const { sealRowOfFolder } = await import("../../lib/provevi/store/store_rows.ts");
  const { leafOfSeal } = await import("../../lib/provevi/log/run_leaf.ts");
  const row = await sealRowOfFolder(folder);
  let leaf: string;
  try {
    leafOfSeal(await Deno.readTextFile(`${folder}/evidence/manifest.json`), null);
    leaf = "made";
  } catch (error) {
    leaf = (error as Error).message;
  }
  return { row: row === null ? null : "a row", leaf };
}
