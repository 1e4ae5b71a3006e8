/**
 * A copy that stops at a stage and waits there, so that a test can kill it as provrun kills a copy that takes
 * too long. Arguments: the store URI, the runs root, the run ID, the policy as JSON, the stage to stop at.
 * Prints `PAUSED` when it stops. The MLflow place is the MLFLOW_TRACKING_URI of the process.
 * @module
 */
import { openStore } from "../../../lib/provevi/runs/open_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { copyRun } from "../../../lib/provevi/mlflow/copy_run.ts";

const [storeUri, runs, runId, policyJson, stage] = Deno.args;
await using store = await openStore(storeUri!, { runs: runs!, readOnly: true });
await copyRun(store, runId!, TelemetryPolicy.fromDict(JSON.parse(policyJson!)), {
  onProgress: (now) => {
    if (now !== stage) return;
    console.log("PAUSED");
    // Blocks the whole process, as a copy stuck on a slow server would, until the test kills it.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300_000);
  },
});
console.log("NOT KILLED");
