/**
 * C2SP tlog-proof@v1: an offline proof that an entry is in a log, `c2sp.org/tlog-proof@v1`, `index <n>`, the
 * inclusion proof's hashes in base64 one a line, an empty line, and the checkpoint (a signed note, with any
 * witnesses' cosignatures). A run keeps its own as `log.tlog-proof` in its folder, and its bundle carries it.
 * @module
 */
import { Buffer } from "node:buffer";
import { ProveviError } from "../evidence/errors.ts";
import { HASH_SIZE } from "./merkle.ts";

/** The first line of a proof. */
export const TLOG_PROOF_HEADER = "c2sp.org/tlog-proof@v1";
/** The file of a run's proof, in its run folder. */
export const PROOF_FILE = "log.tlog-proof";

/** A proof, read. */
export interface TlogProof {
  /** The `extra` data, or null. */
  extra: Uint8Array | null;
  index: number;
  proof: Uint8Array[];
  /** The checkpoint: a signed note. */
  checkpoint: string;
}

/**
 * The text of a proof.
 *
 * @param proof Its parts.
 * @returns The text.
 */
export function tlogProofText(proof: TlogProof): string {
  const lines = [TLOG_PROOF_HEADER];
  if (proof.extra !== null) lines.push(`extra ${Buffer.from(proof.extra).toString("base64")}`);
  lines.push(`index ${proof.index}`);
  for (const h of proof.proof) lines.push(Buffer.from(h).toString("base64"));
  return `${lines.join("\n")}\n\n${proof.checkpoint}`;
}

/**
 * Reads a proof.
 *
 * @param text The text.
 * @returns The proof; its checkpoint is not checked here.
 * @throws ProveviError when it is not a tlog-proof.
 */
export function parseTlogProof(text: string): TlogProof {
  const bad = (why: string) => new ProveviError(`not a ${TLOG_PROOF_HEADER}: ${why}`);
  const split = text.indexOf("\n\n");
  if (split < 0) throw bad("no empty line before the checkpoint");
  const lines = text.slice(0, split).split("\n");
  const checkpoint = text.slice(split + 2);
  if (lines.shift() !== TLOG_PROOF_HEADER) throw bad(`its first line is not ${TLOG_PROOF_HEADER}`);
  let extra: Uint8Array | null = null;
  if (lines[0]?.startsWith("extra ")) extra = base64Of(lines.shift()!.slice(6), bad);
  const index = /^index (0|[1-9][0-9]*)$/.exec(lines.shift() ?? "");
  if (!index || !Number.isSafeInteger(Number(index[1]))) throw bad("no index line");
  if (lines.length > 64) throw bad("more than 64 hashes");
  const proof = lines.map((l) => {
    const h = base64Of(l, bad);
    if (h.length !== HASH_SIZE) throw bad(`a line is not a hash: ${l}`);
    return h;
  });
  return { extra, index: Number(index[1]), proof, checkpoint };
}

function base64Of(text: string, bad: (why: string) => Error): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw bad(`not base64: ${text}`);
  return new Uint8Array(Buffer.from(text, "base64"));
}
