/**
 * The flags of a log's trust policy (`--log-key`, `--witness`, `--quorum`), read into a {@linkcode TrustPolicy}:
 * each key is a verifier key (`<name>+<hex>+<base64>`), or a file whose first line is one.
 * @module
 */
import type { TrustPolicy } from "../lib/provevi/mod.ts";
import { UnreadableFile } from "../lib/provevi/evidence/mod.ts";
// The trust policy's own file, not the log folder's mod.ts: that one brings the witness's server and its door,
// which `provr run` never starts (#25).
import { logVerifier, witnessVerifier } from "../lib/provevi/log/trust_policy.ts";
import { argumentFile } from "./_argument_file.ts";
import { UsageError } from "./_main.ts";

/** The flags as commander gives them. */
export interface LogPolicyFlags {
  logKey?: string[];
  witness?: string[];
  quorum?: string;
}

/**
 * The text of a verifier key given on the command line: the key itself, or a file that holds it.
 *
 * @param given What was given.
 * @returns The key's text.
 * @throws UsageError when it is neither a key nor a regular file that can be read.
 */
export async function vkeyArgument(given: string): Promise<string> {
  if (/^[^+\s]+\+[0-9a-f]{8}\+\S+$/.test(given)) return given;
  let text: string;
  try {
    text = await argumentFile(given, "the verifier key");
  } catch (error) {
    const why = error instanceof UnreadableFile && !(error.cause instanceof Deno.errors.NotFound)
      ? ` (${error.reason})`
      : "";
    throw new UsageError(
      `${given} is neither a verifier key (<name>+<8 hex>+<base64>) nor a file that holds one${why}`,
    );
  }
  return text.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
}

/**
 * The policy the flags give, or null when no log key is given.
 *
 * @param flags The flags.
 * @returns The policy.
 * @throws UsageError for a witness or quorum without a log key, or a quorum that is not a number up to the witnesses.
 */
export async function logPolicyOf(flags: LogPolicyFlags): Promise<TrustPolicy | null> {
  const logs: TrustPolicy["logs"][number][] = [];
  for (const k of flags.logKey ?? []) logs.push(logVerifier(await vkeyArgument(k)));
  const witnesses: TrustPolicy["witnesses"][number][] = [];
  for (const k of flags.witness ?? []) witnesses.push(witnessVerifier(await vkeyArgument(k)));
  if (logs.length === 0) {
    if (witnesses.length || flags.quorum !== undefined) {
      throw new UsageError("--witness and --quorum need --log-key: the log whose checkpoints they cosign");
    }
    return null;
  }
  const quorum = flags.quorum === undefined ? witnesses.length : Number(flags.quorum);
  if (!Number.isInteger(quorum) || quorum < 0 || quorum > witnesses.length) {
    throw new UsageError(
      `--quorum ${flags.quorum} is not a whole number from 0 to the ${witnesses.length} witnesses given`,
    );
  }
  return { logs, witnesses, quorum };
}
