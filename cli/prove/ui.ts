/**
 * `prove ui`: serves a viewer of the store on 127.0.0.1 (runs, a run's trace and evidence, its verdict,
 * agents, experiments, two runs compared, a running run live) until Ctrl-C. What it shows of each run is decided
 * by the telemetry policy's `live` destination. `prove ui --mlflow` opens MLflow's own viewer on the sqlite
 * store's file instead (`cli/prove/ui_mlflow.ts`).
 * @module
 */
import { openStore } from "../../lib/provevi/runs/mod.ts";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/mod.ts";
import { type CatalogChoice, openCatalog } from "../_catalog.ts";
import { UsageError } from "../_main.ts";
import type { ProveContext } from "./_context.ts";
import { uiMlflow } from "./ui_mlflow.ts";

/** Adds the command to `prove`. */
export function addUi(context: ProveContext): void {
  const { program, io, withStore } = context;
  program.command("ui")
    .description(
      "Serve a viewer of the store on 127.0.0.1 (runs, traces, verdicts, live runs) until Ctrl-C; it prints the URL to open.",
    )
    .option("--port <n>", "the port on 127.0.0.1 (0: a free one)", "5000")
    .option(
      "--policy <file>",
      "the telemetry policy whose live destination decides what the viewer shows " +
        "(default: PROVRUN_TELEMETRY_POLICY; with neither, only each run's structure shows)",
    )
    .option(
      "--config <file>",
      "the catalog config that reads committed bundles and experiments, as for verify",
    )
    .option("--tenant <name>", "use this tenant's part of the catalog config")
    .option(
      "--mlflow",
      "open MLflow's own viewer on the sqlite store's file instead (needs mlflow on the PATH)",
    )
    .action((opts: { port: string; policy?: string; mlflow?: boolean } & CatalogChoice) =>
      opts.mlflow ? uiMlflow({ port: opts.port }, context) : withStore(async (store, globals) => {
        if (!/^\d+$/.test(opts.port) || Number(opts.port) > 65535) {
          throw new UsageError(`--port ${opts.port} is not a port: give a whole number from 0 to 65535`);
        }
        const policy = await TelemetryPolicy.fromEnvironment({ file: opts.policy ?? null });
        // The viewer's server is imported by `prove ui` only, not by every prove command.
        const { serveViewer } = await import("../../lib/provevi/viewer/mod.ts");
        const viewer = await serveViewer(store, {
          policy,
          port: Number(opts.port),
          catalog: () => openCatalog(opts),
          openToWrite: () =>
            openStore(globals.store ?? "file", { ...(globals.runs ? { runs: globals.runs } : {}) }),
        });
        const live = policy.liveLevel();
        io.out(`prove ui: serving ${store.uri === "file" ? `the runs in ${store.runsRoot}` : store.uri}`);
        io.out(
          live === null
            ? "prove ui: the policy names no live viewer, so only each run's structure shows (see docs/ui.md)"
            : `prove ui: showing content at ${live}, as the policy's live destination receives`,
        );
        io.out(`prove ui: open ${viewer.url}`);
        io.out("prove ui: press Ctrl-C to stop");
        const stopped = new Promise<void>((resolve) => {
          const stop = () => {
            Deno.removeSignalListener("SIGINT", stop);
            Deno.removeSignalListener("SIGTERM", stop);
            resolve();
          };
          Deno.addSignalListener("SIGINT", stop);
          Deno.addSignalListener("SIGTERM", stop);
        });
        await Promise.race([stopped, viewer.finished]);
        await viewer.shutdown();
      })
    );
}
