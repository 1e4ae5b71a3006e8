/**
 * MLflow's own viewer on the sqlite store's own file (the seed's `prove ui`): `mlflow server` on 127.0.0.1, at
 * port 5000 or the port given, with none of the shell's `MLFLOW_` or `OTEL_` variables.
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { ProveviError } from "../evidence/errors.ts";
import type { EvidenceStore } from "../store/store.ts";
import { isSqliteUri, sqlitePath } from "../store/store_uri.ts";
import type { Environ } from "../telemetry/otlp_target.ts";
import { type MlflowServer, startMlflowServer } from "./mlflow_server.ts";

/** Options of {@linkcode openMlflowViewer}. */
export interface MlflowViewerOptions {
  /** The port on 127.0.0.1; 5000 by default. */
  port?: number;
  /** The shell's variables: only `PATH`, `HOME`, `LANG` and the like reach MLflow, no `MLFLOW_` or `OTEL_` one. */
  environ?: Environ;
  /** The `mlflow` program; else `mlflow` on the `PATH`. */
  program?: string;
  /** How long to wait for MLflow to answer, in milliseconds. */
  wait?: number;
}

/** MLflow's viewer, running; dispose of it to stop it. */
export interface MlflowViewer extends MlflowServer {
  /** The store's file that it shows. */
  readonly file: string;
}

/**
 * Opens MLflow's viewer on a sqlite store's own file, where `prove mlflow` copies runs when
 * `MLFLOW_TRACKING_URI` is unset.
 *
 * @param store A sqlite store.
 * @param options The port, the variables, the program.
 * @returns The running viewer, at `http://127.0.0.1:<port>`.
 * @throws ProveviError for a store that is not a sqlite store, a port in use, or no `mlflow` program.
 * @example
 * ```ts
 * import { openMlflowViewer } from "./mlflow_viewer.ts";
 * // await using viewer = await openMlflowViewer(store, { port: 5088 });
 * // console.log(viewer.url);
 * ```
 */
export async function openMlflowViewer(
  store: EvidenceStore,
  options: MlflowViewerOptions = {},
): Promise<MlflowViewer> {
  if (!isSqliteUri(store.uri)) {
    throw new ProveviError(
      `MLflow's viewer shows a sqlite store's own file, and the store is ${store.uri}: give --store sqlite:///… (the store that prove mlflow copied into)`,
    );
  }
  const file = resolve(sqlitePath(store.uri));
  const port = options.port ?? 5000;
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
  } catch (error) {
    throw new ProveviError(`port ${port} of 127.0.0.1 is in use: give another with --port`, { cause: error });
  }
  const environ = options.environ ?? {
    PATH: readVariable("PATH"),
    HOME: readVariable("HOME"),
    LANG: readVariable("LANG"),
  };
  const server = await startMlflowServer(`sqlite:///${file}`, {
    environ,
    artifacts: join(dirname(file), "mlflow-artifacts"),
    port,
    ...(options.program ? { program: options.program } : {}),
    ...(options.wait ? { wait: options.wait } : {}),
  });
  return Object.assign(server, { file });
}

function readVariable(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
