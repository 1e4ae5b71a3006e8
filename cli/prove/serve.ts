/**
 * `prove serve`: the span receiver as a long-lived daemon for many runs at once. It makes a secret at start and
 * writes it, with its address, to a file only its user can read (`--secret-file`, by default
 * `$XDG_DATA_HOME/prove/serve-<port>.json`); a run's writer opens its run with that secret (`POST /runs`) and
 * gets the run's own keys. It runs until it gets SIGINT or SIGTERM, and removes the file when it stops.
 * @module
 */
import type { SpanDaemon } from "../../lib/provevi/receiver/mod.ts";
import { ProveviError } from "../../lib/provevi/evidence/mod.ts";
import { UsageError } from "../_main.ts";
import type { ProveContext } from "./_context.ts";

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

// The receiver (protobufjs, the OTLP decoders) is imported by `prove serve` only, not by every prove command.
const receiverModule = () => import("../../lib/provevi/receiver/mod.ts");

async function startDaemon(store: Parameters<typeof SpanDaemon.start>[0], port: number): Promise<SpanDaemon> {
  const { SpanDaemon } = await receiverModule();
  try {
    return SpanDaemon.start(store, { port });
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) {
      throw new ProveviError(`port ${port} on 127.0.0.1 is taken: give another --port, or none`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** The refusals of a daemon in a few words: `401 ×3, 421 ×1`, or `none`; the same of its cut connections. */
function refusalsLine(refusals: Record<number | string, number>): string {
  const parts = Object.entries(refusals).map(([status, n]) => `${status} ×${n}`);
  return parts.length ? parts.join(", ") : "none";
}

/** Adds the command to `prove`. */
export function addServe({ program, io, withStore }: ProveContext): void {
  program.command("serve")
    .description(
      "Take OTLP/HTTP spans for many open runs at once, on 127.0.0.1, behind a secret written to a file only you " +
        "can read (provr finds it with PROVE_SERVE=<file>); stop it with Ctrl-C.",
    )
    .option("--port <n>", "the port (default: a free one)")
    .option(
      "--secret-file <file>",
      "where to write the daemon's address and secret (default: $XDG_DATA_HOME/prove/serve-<port>.json)",
    )
    .action((opts: { port?: string; secretFile?: string }) =>
      withStore(async (store) => {
        const port = opts.port === undefined ? 0 : Number(opts.port);
        if (!/^\d+$/.test(opts.port ?? "0") || port > 65535) {
          throw new UsageError(`--port ${opts.port} is not a port: give a whole number from 0 to 65535`);
        }
        const daemon = await startDaemon(store, port);
        const { defaultDaemonFile, removeDaemonFile, writeDaemonFile } = await receiverModule();
        let file: string;
        try {
          file = opts.secretFile ??
            defaultDaemonFile(daemon.port, { XDG_DATA_HOME: env("XDG_DATA_HOME"), HOME: env("HOME") });
          await writeDaemonFile(file, { url: daemon.url, secret: daemon.secret, pid: Deno.pid });
        } catch (error) {
          await daemon.close();
          throw error;
        }
        io.out(`prove serve: taking spans at ${daemon.url}; Ctrl-C stops it`);
        io.out(
          `prove serve: its secret is in ${file} (yours only); provr opens runs here with PROVE_SERVE=${file}`,
        );
        const stop = () => void daemon.close();
        const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
        for (const s of signals) Deno.addSignalListener(s, stop);
        try {
          await daemon.finished;
        } finally {
          for (const s of signals) Deno.removeSignalListener(s, stop);
          await removeDaemonFile(file, daemon.secret);
        }
        io.out(
          `prove serve: stopped; runs still open: ${daemon.open.length ? daemon.open.join(", ") : "none"}; ` +
            `requests refused: ${refusalsLine(daemon.refusals)}; connections cut: ${
              refusalsLine(daemon.cut)
            }`,
        );
      })
    );
}
