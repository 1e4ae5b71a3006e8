/**
 * The works of replay_output_attacks_test.ts that are measured in a process of its own (`measuredInChild`): a
 * replay and a resume of a run recorded by `recorded()` (tests/provrun/replay/_setup.ts), each with a file
 * store over its runs root and a catalog of its own, as that run had, made first, unmeasured.
 * @module
 */
import { Catalog } from "../../lib/provcat/catalog.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { replayRun } from "../../lib/provrun/replay/replay_run.ts";
import { resumeRun } from "../../lib/provrun/replay/resume_run.ts";

/**
 * Measured: the replay of the run `runId` under `runs`, whose output file at `path` is made a sparse file of
 * 1.5 GiB once the source has verified (when the replay opens its own run in the store). Gives
 * `<status>: <error's message>`, or `refused: <message>` when the replay threw.
 */
export async function replay(runs: string, runId: string, path: string) {
  const store = new FileStore({ runs });
  const catalog = await Catalog.open({ config: {} });
  const source = await store.readRun(runId);
  const openRun = store.openRun.bind(store);
  store.openRun = async (...args: Parameters<typeof openRun>) => {
    using f = await Deno.open(path, { write: true, truncate: true });
    await f.truncate(1.5 * 1024 ** 3);
    return await openRun(...args);
  };
  return () =>
    replayRun(source, { store, catalog }).then(
      (replay) => `${replay.run.status}: ${replay.run.error?.message ?? ""}`,
      (error: Error) => `refused: ${error.message}`,
    );
}

/** Measured: the resume of the cut run `runId` under `runs`: how it ended, and the resumed run's folder. */
export async function resume(runs: string, runId: string) {
  const store = new FileStore({ runs });
  const catalog = await Catalog.open({ config: {} });
  return async () => {
    const resumed = await resumeRun(await store.readRun(runId), { store, catalog });
    return { status: resumed.run.status, error: resumed.run.error ?? null, folder: resumed.run.folder };
  };
}
