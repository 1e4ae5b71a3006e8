/**
 * `prove witness`: a witness of logs (C2SP tlog-witness over HTTP), with its own key (a `prove keygen` file) and
 * its own state folder. It cosigns a log's checkpoint only when it extends the one it cosigned before. It runs
 * until SIGINT or SIGTERM.
 * @module
 */
import { Buffer } from "node:buffer";
import { ProveviError } from "../../lib/provevi/evidence/mod.ts";
import { serveWitness, Witness } from "../../lib/provevi/log/mod.ts";
import { UsageError } from "../_main.ts";
import { logVerifier } from "../../lib/provevi/log/mod.ts";
import { argumentFile } from "../_argument_file.ts";
import { vkeyArgument } from "../_log_policy.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addWitness({ program, io }: ProveContext): void {
  program.command("witness")
    .description("Run a witness that cosigns the checkpoints of the logs it is given (C2SP tlog-witness).")
    .requiredOption("--key <file>", "the witness's private key (prove keygen)")
    .requiredOption("--state <dir>", "the folder of its state: the latest checkpoint it cosigned of each log")
    .requiredOption("--log <vkey...>", "the verifier key of each log it witnesses (prove log key)")
    .option("--name <name>", "its name, the key's name in its cosignatures", "witness.local")
    .option("--port <n>", "the port on 127.0.0.1 (default: a free one)")
    .action(async (opts: { key: string; state: string; log: string[]; name: string; port?: string }) => {
      const port = opts.port === undefined ? 0 : Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new UsageError(`--port ${opts.port} is not a port: give a whole number from 0 to 65535`);
      }
      const witness = new Witness({
        name: opts.name,
        seed: await readSeed(opts.key),
        state: opts.state,
        logs: await Promise.all(opts.log.map(async (l) => logVerifier(await vkeyArgument(l)))),
      });
      let server;
      try {
        server = serveWitness(witness, { port });
      } catch (error) {
        if (error instanceof Deno.errors.AddrInUse) {
          throw new ProveviError(`port ${port} on 127.0.0.1 is taken: give another --port, or none`, {
            cause: error,
          });
        }
        throw error;
      }
      io.out(`prove witness: ${server.url} key ${witness.verifier.vkey}`);
      const stopped = Promise.withResolvers<void>();
      const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
      const stop = () => stopped.resolve();
      for (const s of signals) Deno.addSignalListener(s, stop);
      try {
        await stopped.promise;
      } finally {
        for (const s of signals) Deno.removeSignalListener(s, stop);
        await server.close();
      }
    });
}

/** The seed of a private key file, which must be readable by its owner only. */
async function readSeed(path: string): Promise<Uint8Array> {
  let file: { keyval?: { private?: string } };
  // a regular file, bounded: a FIFO or a device given as the key is refused, not waited on
  const text = await argumentFile(path, "the witness key");
  try {
    file = JSON.parse(text);
  } catch (error) {
    throw new ProveviError(`cannot read the witness key ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const hex = file?.keyval?.private;
  if (typeof hex !== "string" || !/^[0-9a-f]{64}$/.test(hex)) {
    throw new ProveviError(`${path} is not an Ed25519 private key file; make one with prove keygen`);
  }
  if (Deno.build.os !== "windows" && ((Deno.statSync(path).mode ?? 0) & 0o077) !== 0) {
    throw new ProveviError(`the witness key ${path} may be read by others; run chmod 600 ${path}`);
  }
  return new Uint8Array(Buffer.from(hex, "hex"));
}
