/**
 * `prove keygen`: an Ed25519 key pair to sign runs with (`provr run --sign-key`, `run.sign_key`) and to trust
 * (`prove verify --trust`).
 * @module
 */
import { writeKeyPair } from "../../lib/provevi/evidence/mod.ts";
import type { ProveContext } from "./_context.ts";
import { jsonText } from "../_json.ts";

/** Adds the command to `prove`. */
export function addKeygen({ program, io }: ProveContext): void {
  program.command("keygen")
    .description("Make an Ed25519 key pair that signs runs: FILE (private, owner only) and FILE.pub.")
    .argument("<file>", "where the private key goes; the public key goes to FILE.pub")
    .option("--json", "print the key's ID and files as JSON")
    .action(async (file: string, opts: { json?: boolean }) => {
      const made = await writeKeyPair(file);
      if (opts.json) io.out(jsonText(made));
      else io.out(`${made.keyid}: private key ${made.privatePath}, public key ${made.publicPath}`);
    });
}
