/**
 * The log's key and origin. A store's log signs its checkpoints with an Ed25519 key of its own, kept by the store
 * (a key file in the file form `prove keygen` writes, or a row), made the first time the log is written. The
 * origin, the checkpoint's first line and the note key's name, is `provevi.local/<kind>/<16 hex>`, the hex the
 * start of the SHA-256 of the public key: one key, one log.
 * @module
 */
import { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import { ProveviError } from "../evidence/errors.ts";
import { sha256Hex } from "../evidence/hash.ts";
import { keyIdOf as securesystemsKeyId, type PrivateKeyFile } from "../evidence/signing_key.ts";
import { ed25519Signer, type NoteSigner, type NoteVerifier, publicOfSeed } from "./note.ts";

/** A log's signing key: its origin, its note signer and verifier, and the key file it came from. */
export interface LogKey {
  origin: string;
  signer: NoteSigner;
  verifier: NoteVerifier;
  /** The key in the file form of `prove keygen`. */
  file: PrivateKeyFile;
}

/**
 * A new key file's content (the form `prove keygen` writes).
 *
 * @returns The private key file.
 */
export function newKeyFile(): PrivateKeyFile {
  const seed = new Uint8Array(randomBytes(32));
  const pub = Buffer.from(publicOfSeed(seed)).toString("hex");
  return {
    keyid: securesystemsKeyId(pub),
    keytype: "ed25519",
    scheme: "ed25519",
    keyval: { public: pub, private: Buffer.from(seed).toString("hex") },
  };
}

/**
 * The origin of a store's log.
 *
 * @param kind `file`, `sqlite` or `postgres`.
 * @param publicHex The log key's public key, in hex.
 * @returns `provevi.local/<kind>/<16 hex>`.
 */
export function logOrigin(kind: string, publicHex: string): string {
  return `provevi.local/${kind}/${sha256Hex(Buffer.from(publicHex, "hex")).slice(0, 16)}`;
}

/**
 * The log key of a key file.
 *
 * @param text The key file's JSON.
 * @param kind The store's kind, which names the origin.
 * @param where Where the key was read, for errors.
 * @returns The key.
 * @throws ProveviError when it is not an Ed25519 private key file whose halves match.
 */
export function logKeyOf(text: string, kind: string, where: string): LogKey {
  let file: PrivateKeyFile;
  try {
    file = JSON.parse(text);
  } catch (error) {
    throw new ProveviError(`the log key ${where} is not JSON; restore it from a copy`, { cause: error });
  }
  const hex = /^[0-9a-f]{64}$/;
  if (!hex.test(file?.keyval?.private ?? "") || !hex.test(file?.keyval?.public ?? "")) {
    throw new ProveviError(`the log key ${where} is not an Ed25519 private key file; restore it from a copy`);
  }
  const seed = new Uint8Array(Buffer.from(file.keyval.private, "hex"));
  if (Buffer.from(publicOfSeed(seed)).toString("hex") !== file.keyval.public) {
    throw new ProveviError(`the log key ${where}: its private part does not give its public part`);
  }
  const origin = logOrigin(kind, file.keyval.public);
  const { signer, verifier } = ed25519Signer(origin, seed);
  return { origin, signer, verifier, file };
}
