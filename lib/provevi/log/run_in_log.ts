/**
 * Check 10, the run in the log: the run's `log.tlog-proof` binds its leaf (made from its own manifest and
 * attestation) to a checkpoint that the trust policy accepts, offline.
 * @module
 */
import { join } from "node:path";
import { type Problem, problem } from "../evidence/problem.ts";
import { readCapped } from "../evidence/open_file.ts";
import { EVIDENCE_TEXT_MAX_BYTES } from "../evidence/payload_pack.ts";
import { leafHash, verifyInclusion } from "./merkle.ts";
import { leafBytes, leafOfSeal } from "./run_leaf.ts";
import { parseTlogProof, PROOF_FILE } from "./tlog_proof.ts";
import { checkCheckpoint, type TrustPolicy } from "./trust_policy.ts";
import { parseCheckpoint } from "./checkpoint.ts";
import { parseNote } from "./note.ts";

/** What the check found beside its problems: where the run is in the log, and who vouches for it. */
export interface InLog {
  origin: string;
  index: number;
  size: number;
  witnesses: string[];
}

/** What the check reads of a run. */
export interface RunSeal {
  runId: string;
  /** The text of `manifest.json`, or null (the evidence check reports it). */
  manifestText: string | null;
  /** The bytes of `attestation.dsse.json`, or null. */
  attestation: Uint8Array | null;
  /** The text of `log.tlog-proof`, or null when there is none. */
  proofText: string | null;
}

/**
 * Checks that a run is in a log the policy trusts.
 *
 * @param run The run's manifest, attestation and proof.
 * @param policy The log keys, witnesses and quorum.
 * @returns The problems, and where the run is when it is in the log.
 * @example
 * ```ts ignore
 * import { checkRunInLog } from "./run_in_log.ts";
 * const { problems, inLog } = checkRunInLog(seal, { logs: [key], witnesses: [], quorum: 0 });
 * ```
 */
export function checkRunInLog(
  run: RunSeal,
  policy: TrustPolicy,
): { problems: Problem[]; inLog: InLog | null } {
  const where = { file: PROOF_FILE };
  const fail = (code: Parameters<typeof problem>[0], message: string) => ({
    problems: [problem(code, message, where)],
    inLog: null,
  });
  if (run.proofText === null) {
    return fail(
      "log.proof_missing",
      `${PROOF_FILE} is missing, so nothing shows that run "${run.runId}" is in the log; write it with prove log proof ${run.runId} --write`,
    );
  }
  let proof;
  try {
    proof = parseTlogProof(run.proofText);
  } catch (error) {
    return fail("log.proof_unreadable", `${PROOF_FILE}: ${(error as Error).message}`);
  }
  const checked = checkCheckpoint(proof.checkpoint, policy);
  if (!checked.ok) return fail(checked.refusal.code, `${PROOF_FILE}: ${checked.refusal.message}`);
  if (run.manifestText === null) return { problems: [], inLog: null };
  const { checkpoint } = checked.trusted;
  let leaf;
  try {
    leaf = leafBytes(leafOfSeal(run.manifestText, run.attestation));
  } catch {
    return { problems: [], inLog: null }; // a manifest that is not one: the manifest check reports it
  }
  if (!verifyInclusion(leafHash(leaf), proof.index, checkpoint.size, proof.proof, checkpoint.root)) {
    return fail(
      "log.not_included",
      `${PROOF_FILE} does not prove that run "${run.runId}", as its manifest and attestation are now, is leaf ${proof.index} of ${checkpoint.origin} at size ${checkpoint.size}`,
    );
  }
  return {
    problems: [],
    inLog: {
      origin: checkpoint.origin,
      index: proof.index,
      size: checkpoint.size,
      witnesses: checked.trusted.witnesses.map((w) => w.name),
    },
  };
}

/**
 * Whether a tlog-proof proves that a run, as its manifest and attestation are, is the leaf at its index of the
 * tree its checkpoint names. The checkpoint's signatures are not checked here: check 10 checks them against a
 * trust policy.
 *
 * @param proofText The text of `log.tlog-proof`.
 * @param run The run's manifest text and attestation bytes.
 * @returns True when it does; false for any proof that does not, or cannot be read.
 */
export function proofProvesRun(
  proofText: string,
  run: { manifestText: string; attestation: Uint8Array | null },
): boolean {
  try {
    const proof = parseTlogProof(proofText);
    const checkpoint = parseCheckpoint(parseNote(proof.checkpoint).text);
    const leaf = leafBytes(leafOfSeal(run.manifestText, run.attestation));
    return verifyInclusion(leafHash(leaf), proof.index, checkpoint.size, proof.proof, checkpoint.root);
  } catch {
    return false;
  }
}

/**
 * Reads what the check needs from a run folder: the attestation and `log.tlog-proof` (links refused).
 *
 * @param folder The run folder.
 * @returns The attestation's bytes and the proof's text, each null when missing.
 */
export async function readRunLogFiles(
  folder: string,
): Promise<{ attestation: Uint8Array | null; proofText: string | null }> {
  const read = async (path: string) => {
    try {
      return await readCapped(path, EVIDENCE_TEXT_MAX_BYTES);
    } catch {
      return null;
    }
  };
  const attestation = await read(join(folder, "evidence", "attestation.dsse.json"));
  const proof = await read(join(folder, PROOF_FILE));
  let proofText: string | null = null;
  if (proof !== null) {
    try {
      proofText = new TextDecoder("utf-8", { fatal: true }).decode(proof);
    } catch {
      proofText = "\u0000not UTF-8";
    }
  }
  return { attestation, proofText };
}
