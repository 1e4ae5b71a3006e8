/**
 * One writer of the concurrency attack: runs a run file N times in this process (its `run.store` names the
 * shared SQLite file) and prints one line per run: `run ID STATUS`, or `error NAME: MESSAGE`. Not a test
 * itself; tests/attacks/kill_attacks_test.ts starts four of it at once.
 * @module
 */
import { RunFile } from "../../lib/provrun/run/run_file.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";

const [path, runs, count] = Deno.args;
const file = await RunFile.load(path!);
for (let i = 0; i < Number(count); i++) {
  try {
    const outcome = await runFile(file, { runs: runs! });
    console.log(
      `run ${outcome.runId} ${outcome.status}${outcome.error ? ` ${JSON.stringify(outcome.error)}` : ""}`,
    );
  } catch (error) {
    console.log(`error ${(error as Error).name}: ${(error as Error).message.split("\n")[0]}`);
  }
}
