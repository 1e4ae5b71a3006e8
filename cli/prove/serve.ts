/**
 * `prove serve`: the span receiver as a long-lived daemon for many runs at once. A run opens with it
 * (`POST /runs`), gets a traces URL of its own, and seals with it; it refuses spans for a run that is not open.
 * It runs until it gets SIGINT or SIGTERM.
 * @module
 */
import { ProveviError, SpanDaemon } from "../../lib/provevi/mod.ts";
import { UsageError } from "../_main.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addServe({ program, io, withStore }: ProveContext): void {
  program.command("serve")
    .description(
      "Take OTLP/HTTP spans for many open runs at once, on 127.0.0.1 (a run opens with POST /runs and seals " +
        "with POST /runs/<token>/seal); stop it with Ctrl-C.",
    )
    .option("--port <n>", "the port (default: a free one)")
    .action((opts: { port?: string }) =>
      withStore(async (store) => {
        const port = opts.port === undefined ? 0 : Number(opts.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) {
          throw new UsageError(`--port ${opts.port} is not a port: give a whole number from 0 to 65535`);
        }
        let daemon: SpanDaemon;
        try {
          daemon = SpanDaemon.start(store, { port });
        } catch (error) {
          if (error instanceof Deno.errors.AddrInUse) {
            throw new ProveviError(`port ${port} on 127.0.0.1 is taken: give another --port, or none`, {
              cause: error,
            });
          }
          throw error;
        }
        io.out(`prove serve: taking spans at ${daemon.url} (POST /runs to open a run); Ctrl-C stops it`);
        const stop = () => daemon.close();
        const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
        for (const s of signals) Deno.addSignalListener(s, stop);
        try {
          await daemon.finished;
        } finally {
          for (const s of signals) Deno.removeSignalListener(s, stop);
        }
        io.out(
          `prove serve: stopped; runs still open: ${daemon.open.length ? daemon.open.join(", ") : "none"}`,
        );
      })
    );
}
