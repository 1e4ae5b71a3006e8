/**
 * `prove ui --mlflow [--port N]`: MLflow's own viewer on the sqlite store's own file, on 127.0.0.1, until
 * interrupted. The project's own viewer stays `prove ui`; this is the action `prove ui` calls with `--mlflow`.
 * @module
 */
import { UsageError } from "../_main.ts";
import type { ProveContext } from "./_context.ts";

/** The options of `prove ui` that MLflow's viewer reads. */
export interface UiMlflowOptions {
  /** The port, as typed. */
  port?: string;
}

/**
 * Runs MLflow's viewer on the store of `--store` until `signal` aborts (Ctrl-C when none is given).
 *
 * @param opts The parsed options of `prove ui`.
 * @param context The `prove` context.
 * @param control `signal`: stops the viewer (tests); `onReady`: told the viewer's URL.
 */
export async function uiMlflow(
  opts: UiMlflowOptions,
  { io, withStore }: ProveContext,
  control: { signal?: AbortSignal; onReady?: (url: string) => void } = {},
): Promise<void> {
  let port: number | undefined;
  if (opts.port !== undefined) {
    if (!/^\d+$/.test(opts.port) || Number(opts.port) < 1 || Number(opts.port) > 65535) {
      throw new UsageError(
        `--port takes a port, a whole number from 1 to 65535, not ${JSON.stringify(opts.port)}`,
      );
    }
    port = Number(opts.port);
  }
  await withStore(async (store) => {
    const { openMlflowViewer } = await import("../../lib/provevi/mlflow/mod.ts");
    await using viewer = await openMlflowViewer(store, port === undefined ? {} : { port });
    io.out(`MLflow's viewer on ${viewer.file}: ${viewer.url}`);
    control.onReady?.(viewer.url);
    const signal = control.signal ?? interrupted();
    if (!signal.aborted) {
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    }
  });
}

/** A signal that aborts on Ctrl-C (SIGINT) or SIGTERM. */
function interrupted(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(name, stop);
    } catch { /* not on this system */ }
  }
  return controller.signal;
}
