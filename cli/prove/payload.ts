/**
 * `prove payload`: one payload of a run, by its SHA-256 or the start of it, after checking its hash; JSON is
 * pretty-printed, other text printed as it is.
 * @module
 */
import { ProveviError, storedPayloads } from "../../lib/provevi/evidence/mod.ts";
import { findRun } from "../../lib/provevi/runs/mod.ts";
import { parseJson } from "../../lib/provevi/evidence/json_depth.ts";
import { UsageError } from "../_main.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addPayload({ program, io, withStore }: ProveContext): void {
  program.command("payload")
    .description("Print one payload of a run, after checking its hash; JSON is pretty-printed.")
    .argument("<run>", "a run ID, latest, the start of a run ID, or a run folder's path")
    .argument("<sha256>", "the payload's SHA-256, or the start of it")
    .action((run: string, sha256: string) => {
      const start = sha256.toLowerCase();
      if (!/^[0-9a-f]{1,64}$/.test(start)) {
        throw new UsageError(`"${sha256}" is not a SHA-256: write the payload's hash or the start of it`);
      }
      return withStore(async (store) => {
        const record = await findRun(run, { store });
        const found = (await storedPayloads(record)).filter((n) => n.startsWith(start));
        if (found.length === 0) throw new ProveviError(`run "${record.runId}" has no payload ${sha256}`);
        if (found.length > 1) {
          throw new ProveviError(
            `"${sha256}" starts ${found.length} payloads of run "${record.runId}" (${
              found.slice(0, 3).map((f) => f.slice(0, 12)).join(", ")
            }…); write more of the hash`,
          );
        }
        const bytes = await record.payload(found[0]!); // checks the hash
        let text: string;
        try {
          text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
        } catch {
          throw new ProveviError(
            `payload ${
              found[0]
            } of run "${record.runId}" is not text (${bytes.length} bytes); read it from the run folder`,
          );
        }
        io.out(shownPayload(text));
      });
    });
}

/**
 * A payload's text as `prove payload` prints it: JSON pretty-printed, other text as it is (without its last
 * newline). JSON that would take more memory parsed than a reader gives a text (a payload of 100 MiB of `{},`
 * took some 2 GiB), or nests deeper than a reader walks, is printed as it is too.
 *
 * @param text The payload's text.
 * @returns What to print.
 */
export function shownPayload(text: string): string {
  try {
    return JSON.stringify(parseJson(text, { weighed: true }), null, 2);
  } catch {
    return text.replace(/\n$/, "");
  }
}
