/**
 * The flags of a log's trust policy (`--log-key`, `--witness`, `--quorum`), read into a {@linkcode TrustPolicy}:
 * each key is a verifier key (`<name>+<hex>+<base64>`), or a file whose first line is one.
 * @module
 */
import type { TrustPolicy } from "../lib/provevi/mod.ts";
// The trust policy's own file, not the log folder's mod.ts: that one brings the witness's server and its door,
// which `provr run` never starts (#25).
import { logVerifier, witnessVerifier } from "../lib/provevi/log/trust_policy.ts";
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
 */
export function vkeyArgument(given: string): string {
  if (/^[^+\s]+\+[0-9a-f]{8}\+\S+$/.test(given)) return given;
  try {
    return Deno.readTextFileSync(given).split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
  } catch {
    throw new UsageError(
      `${given} is neither a verifier key (<name>+<8 hex>+<base64>) nor a file that holds one`,
    );
  }
}

/**
 * The policy the flags give, or null when no log key is given.
 *
 * @param flags The flags.
 * @returns The policy.
 * @throws UsageError for a witness or quorum without a log key, or a quorum that is not a number up to the witnesses.
 */
export function logPolicyOf(flags: LogPolicyFlags): TrustPolicy | null {
  const logs = (flags.logKey ?? []).map((k) => logVerifier(vkeyArgument(k)));
  const witnesses = (flags.witness ?? []).map((k) => witnessVerifier(vkeyArgument(k)));
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
