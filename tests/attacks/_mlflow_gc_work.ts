/**
 * The work of mlflow_gc_attacks_test.ts that is measured in a process of its own (`measuredInChild`): the purge
 * of deleted runs with a program in mlflow's place.
 * @module
 */
import { purgeDeletedRuns } from "../../lib/provevi/mlflow/mlflow_server.ts";

/** Measured: the purge with `program`; its error's message, or null. */
export async function purge(program: string, backend: string): Promise<{ message: string | null }> {
  try {
    await purgeDeletedRuns(backend, ["0123abcd"], {
      environ: { PATH: "/usr/bin:/bin" },
      program,
      server: "http://127.0.0.1:9",
    });
    return { message: null };
  } catch (error) {
    return { message: (error as Error).message };
  }
}
