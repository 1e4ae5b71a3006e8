/**
 * The variables a copy in MLflow reads, apart from the copy itself: a run reads them when it starts (to say
 * early that a copy will be refused), and that must not load the MLflow client.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import { REFUSED_VARIABLES } from "./refuse_redirects.ts";

/** The variables a copy reads besides the refused ones. */
export const COPY_VARIABLES: readonly string[] = [
  "MLFLOW_TRACKING_URI",
  "MLFLOW_TRACKING_TOKEN",
  "MLFLOW_TRACKING_USERNAME",
  "MLFLOW_TRACKING_PASSWORD",
  "PATH",
  "HOME",
  "LANG",
  "TMPDIR",
  ...REFUSED_VARIABLES,
];

/**
 * The variables of the process that a copy reads, each read by name; one that `--allow-env` does not let it
 * read counts as unset.
 *
 * @returns The variables.
 */
export function copyEnviron(): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const name of COPY_VARIABLES) {
    try {
      out[name] = Deno.env.get(name);
    } catch (error) {
      if (REFUSED_VARIABLES.includes(name) || name === "MLFLOW_TRACKING_URI") {
        throw new ProveviError(
          `cannot read ${name}, which the copy in MLflow must check: allow it with --allow-env=${name}`,
          { cause: error },
        );
      }
    }
  }
  return out;
}
