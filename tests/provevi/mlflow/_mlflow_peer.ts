/**
 * The MLflow peer of `.ci/peers/mlflow.sh` (a real `mlflow server`, its Python and its bin folder), and MLflow's
 * own Python client for reading a copy back. Its tests are `peerTest("mlflow", …)` (`tests/_peers.ts`).
 * @module
 */

/** The MLflow tracking server of the peer, its Python and its bin folder; undefined when the peer is not set. */
export const MLFLOW_URI = Deno.env.get("PROVEVI_TEST_MLFLOW_URI");
export const MLFLOW_PYTHON = Deno.env.get("PROVEVI_TEST_MLFLOW_PYTHON");
export const MLFLOW_BIN = Deno.env.get("PROVEVI_TEST_MLFLOW_BIN");

/** Fails a test in CI when the MLflow peer is missing, with a message that names it. */
export function needMlflow(): { uri: string; python: string; bin: string } {
  if (MLFLOW_URI === undefined || MLFLOW_PYTHON === undefined || MLFLOW_BIN === undefined) {
    throw new Error(
      "the MLflow peer is missing: PROVEVI_TEST_MLFLOW_URI, PROVEVI_TEST_MLFLOW_PYTHON and PROVEVI_TEST_MLFLOW_BIN must be set (.ci/peers/mlflow.sh)",
    );
  }
  return { uri: MLFLOW_URI, python: MLFLOW_PYTHON, bin: MLFLOW_BIN };
}

/**
 * Runs a Python program with MLflow's own client against a tracking URI, and gives its JSON output.
 *
 * @param program The program; it prints one JSON value.
 * @param trackingUri The tracking URI it reads.
 */
export async function mlflowPython(program: string, trackingUri: string): Promise<unknown> {
  const { python } = needMlflow();
  const out = await new Deno.Command(python, {
    args: ["-c", program],
    env: {
      MLFLOW_TRACKING_URI: trackingUri,
      MLFLOW_DISABLE_AGENT_HINT: "1",
      MLFLOW_DISABLE_TELEMETRY: "true",
      NO_PROXY: "*",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) throw new Error(`python failed: ${new TextDecoder().decode(out.stderr).slice(-2000)}`);
  return JSON.parse(text.trim().split("\n").pop()!);
}
