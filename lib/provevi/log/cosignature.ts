/**
 * C2SP tlog-cosignature, Ed25519 (cosignature/v1, signature type 0x04): a witness signs
 * `cosignature/v1\ntime <seconds>\n` and the checkpoint's text, and its signature is the 8-byte big-endian time
 * followed by the Ed25519 signature. The key ID is that of the name with type 0x04.
 * @module
 */
import { type KeyObject, sign, verify } from "node:crypto";
import { ProveviError } from "../evidence/errors.ts";
import {
  COSIGNATURE_TYPE,
  ed25519PublicKey,
  isKeyName,
  noteKeyId,
  type NoteSigner,
  type NoteVerifier,
  privateKeyOf,
  publicOfSeed,
  vkeyText,
} from "./note.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The message a cosignature signs. */
export function cosignedMessage(time: number, checkpointText: string): Uint8Array {
  return encoder.encode(`cosignature/v1\ntime ${time}\n${checkpointText}`);
}

/** A cosigner: a note signer whose signatures carry the time they were made. */
export interface Cosigner extends NoteSigner {
  /** The clock, in seconds since the epoch (now by default). */
  now?: () => number;
}

/**
 * A cosigner of checkpoints (a witness's key).
 *
 * @param name The witness's name.
 * @param seed The 32-byte Ed25519 seed.
 * @param options `now`: the clock in seconds, for tests.
 * @returns The signer and its verifier.
 * @throws ProveviError for a name a note does not allow.
 */
export function cosigner(
  name: string,
  seed: Uint8Array,
  options: { now?: () => number } = {},
): { signer: NoteSigner; verifier: CosignatureVerifier } {
  if (!isKeyName(name)) throw new ProveviError(`"${name}" cannot name a witness key: no spaces and no +`);
  const key = privateKeyOf(seed);
  const verifier = cosignatureVerifier(name, publicOfSeed(seed));
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const signer: NoteSigner = {
    name,
    keyId: verifier.keyId,
    sign: (text) => {
      const time = now();
      const signature = sign(null, cosignedMessage(time, decoder.decode(text)), key);
      const out = new Uint8Array(8 + 64);
      new DataView(out.buffer).setBigUint64(0, BigInt(time));
      out.set(signature, 8);
      return out;
    },
  };
  return { signer, verifier };
}

/** A cosignature verifier: a note verifier that also gives the time of a signature. */
export interface CosignatureVerifier extends NoteVerifier {
  /** The time a cosignature says it was made, or null when it is not one. */
  timeOf(signature: Uint8Array): number | null;
}

/**
 * A verifier of a witness's cosignatures.
 *
 * @param name The witness's name.
 * @param publicKey Its 32-byte Ed25519 public key.
 * @returns The verifier.
 */
export function cosignatureVerifier(name: string, publicKey: Uint8Array): CosignatureVerifier {
  const keyId = noteKeyId(name, COSIGNATURE_TYPE, publicKey);
  const key: KeyObject = ed25519PublicKey(name, publicKey);
  const timeOf = (signature: Uint8Array): number | null => {
    if (signature.length !== 72) return null;
    const time = new DataView(signature.buffer, signature.byteOffset).getBigUint64(0);
    return time >= 2n ** 63n ? null : Number(time);
  };
  return {
    name,
    keyId,
    vkey: vkeyText(name, keyId, COSIGNATURE_TYPE, publicKey),
    timeOf,
    verify: (message, signature) => {
      const time = timeOf(signature);
      if (time === null) return false;
      return verify(null, cosignedMessage(time, decoder.decode(message)), key, signature.subarray(8));
    },
  };
}
