/**
 * C2SP signed notes: a text signed by named keys, each signature line `— <name> base64(keyID || signature)`.
 * Ed25519 keys sign the text itself (signature type 0x01); the key ID is the first four bytes of
 * SHA-256(name || "\n" || type || public key). Verifier keys are written `<name>+<hex key ID>+base64(type || key)`.
 * Keys are node:crypto key objects, so signing and checking are synchronous.
 * @module
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from "node:crypto";
import { Buffer } from "node:buffer";
import { ProveviError } from "../evidence/errors.ts";

/** The signature type of a note's Ed25519 signature. */
export const ED25519_TYPE = 0x01;
/** The signature type of an Ed25519 cosignature/v1 (C2SP tlog-cosignature). */
export const COSIGNATURE_TYPE = 0x04;

/** What signs a note: its name and key ID, and the signature of a message (without the key ID). */
export interface NoteSigner {
  readonly name: string;
  readonly keyId: number;
  sign(message: Uint8Array): Uint8Array;
}

/** What checks a note's signature: its name and key ID, and the check of a message's signature. */
export interface NoteVerifier {
  readonly name: string;
  readonly keyId: number;
  /** The verifier key text, `<name>+<hex ID>+<base64>`. */
  readonly vkey: string;
  verify(message: Uint8Array, signature: Uint8Array): boolean;
}

/** A signature line of a note. */
export interface NoteSignature {
  name: string;
  keyId: number;
  /** The bytes after the key ID. */
  signature: Uint8Array;
  /** The line, without its newline. */
  line: string;
}

/** A note split into its text and its signature lines. */
export interface Note {
  /** The text, with its last newline. */
  text: string;
  signatures: NoteSignature[];
}

const encoder = new TextEncoder();

/**
 * The key ID of a named key: SHA-256(name || 0x0A || type || public key)[:4], as a big-endian number.
 *
 * @param name The key's name.
 * @param type The signature type byte.
 * @param publicKey The public key's bytes.
 * @returns The key ID.
 */
export function noteKeyId(name: string, type: number, publicKey: Uint8Array): number {
  const digest = createHash("sha256").update(name).update(new Uint8Array([0x0a, type])).update(publicKey)
    .digest();
  return digest.readUInt32BE(0);
}

/**
 * True for a key name a note allows: not empty, no Unicode space, no `+`.
 *
 * @param name The name.
 */
export function isKeyName(name: string): boolean {
  return name.length > 0 &&
    !/[\s+\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u.test(name) &&
    // deno-lint-ignore no-control-regex -- a key name is refused when it holds one
    /^[^\x00-\x1f\x7f]+$/.test(name);
}

/** The Ed25519 private key object of a 32-byte seed. */
export function privateKeyOf(seed: Uint8Array): KeyObject {
  const pub = publicOfSeed(seed);
  return createPrivateKey({
    key: { kty: "OKP", crv: "Ed25519", x: b64url(pub), d: b64url(seed) },
    format: "jwk",
  });
}

/** The 32-byte public key of an Ed25519 seed. */
export function publicOfSeed(seed: Uint8Array): Uint8Array {
  const key = createPrivateKey({
    key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]),
    format: "der",
    type: "pkcs8",
  });
  const jwk = createPublicKey(key).export({ format: "jwk" }) as { x: string };
  return new Uint8Array(Buffer.from(jwk.x, "base64url"));
}

/**
 * The key object of a 32-byte Ed25519 public key.
 *
 * @param name The key's name, for the message.
 * @param pub The public key.
 * @returns The key object.
 * @throws ProveviError when the bytes are not a point of the curve: a key given by a user (a verifier key of
 * the right length and hash but no key) is one line, not a crash of node:crypto's.
 */
export function ed25519PublicKey(name: string, pub: Uint8Array): KeyObject {
  try {
    return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: b64url(pub) }, format: "jwk" });
  } catch (error) {
    throw new ProveviError(
      `the key ${
        name.slice(0, 100)
      } is not an Ed25519 public key (its 32 bytes are not a point of the curve); ` +
        `give the key as prove log key or the witness printed it`,
      { cause: error },
    );
  }
}

function b64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url");
}

/**
 * An Ed25519 note signer (type 0x01).
 *
 * @param name The key's name (for a log: its origin).
 * @param seed The 32-byte Ed25519 seed.
 * @returns The signer and its verifier.
 * @throws ProveviError for a name a note does not allow.
 */
export function ed25519Signer(
  name: string,
  seed: Uint8Array,
): { signer: NoteSigner; verifier: NoteVerifier } {
  if (!isKeyName(name)) throw new ProveviError(`"${name}" cannot name a note key: no spaces and no +`);
  const key = privateKeyOf(seed);
  const pub = publicOfSeed(seed);
  const verifier = ed25519Verifier(name, pub);
  const signer: NoteSigner = {
    name,
    keyId: verifier.keyId,
    sign: (message) => new Uint8Array(sign(null, message, key)),
  };
  return { signer, verifier };
}

/**
 * An Ed25519 note verifier (type 0x01).
 *
 * @param name The key's name.
 * @param publicKey The 32-byte public key.
 * @returns The verifier.
 */
export function ed25519Verifier(name: string, publicKey: Uint8Array): NoteVerifier {
  const keyId = noteKeyId(name, ED25519_TYPE, publicKey);
  const key = ed25519PublicKey(name, publicKey);
  return {
    name,
    keyId,
    vkey: vkeyText(name, keyId, ED25519_TYPE, publicKey),
    verify: (message, signature) => signature.length === 64 && verify(null, message, key, signature),
  };
}

/** The text of a verifier key. */
export function vkeyText(name: string, keyId: number, type: number, publicKey: Uint8Array): string {
  const body = Buffer.concat([new Uint8Array([type]), publicKey]).toString("base64");
  return `${name}+${keyId.toString(16).padStart(8, "0")}+${body}`;
}

/**
 * Reads a verifier key: its name, key ID, signature type and public key. The key ID must be the one the key
 * gives.
 *
 * @param vkey `<name>+<hex key ID>+<base64(type || key)>`.
 * @returns Its parts.
 * @throws ProveviError when it is not such a key.
 */
export function parseVkey(
  vkey: string,
): { name: string; keyId: number; type: number; publicKey: Uint8Array } {
  const text = vkey.trim();
  const bad = (why: string) =>
    new ProveviError(`"${text}" is not a verifier key (${why}); give <name>+<8 hex>+<base64>`);
  // The base64 part may hold "+" itself: the name and the key ID end at the first two.
  const first = text.indexOf("+");
  const second = first < 0 ? -1 : text.indexOf("+", first + 1);
  if (second < 0) throw bad("three parts joined by +");
  const [name, hex, body] = [text.slice(0, first), text.slice(first + 1, second), text.slice(second + 1)];
  if (!isKeyName(name)) throw bad("its name");
  if (!/^[0-9a-f]{8}$/.test(hex)) throw bad("its key ID is not 8 lowercase hex digits");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length % 4 !== 0) throw bad("its key is not base64");
  const bytes = new Uint8Array(Buffer.from(body, "base64"));
  if (bytes.length !== 33) throw bad("its key is not a type byte and 32 bytes");
  const type = bytes[0]!;
  const publicKey = bytes.subarray(1);
  const keyId = parseInt(hex, 16);
  if (noteKeyId(name, type, publicKey) !== keyId) {
    throw bad("its key ID is not the one its name and key give");
  }
  return { name, keyId, type, publicKey };
}

/**
 * Signs a note's text with each signer and appends their lines to the signatures it has.
 *
 * @param text The text, ending with a newline.
 * @param signers The signers.
 * @param existing Signature lines to keep before the new ones.
 * @returns The signed note.
 * @throws RangeError when the text does not end with a newline.
 */
export function signNote(
  text: string,
  signers: readonly NoteSigner[],
  existing: readonly string[] = [],
): string {
  if (!text.endsWith("\n")) throw new RangeError("a note's text ends with a newline");
  const message = encoder.encode(text);
  const lines = [...existing];
  for (const s of signers) lines.push(signatureLine(s.name, s.keyId, s.sign(message)));
  return `${text}\n${lines.map((l) => `${l}\n`).join("")}`;
}

/** A signature line: `— <name> base64(keyID || signature)`. */
export function signatureLine(name: string, keyId: number, signature: Uint8Array): string {
  const bytes = new Uint8Array(4 + signature.length);
  new DataView(bytes.buffer).setUint32(0, keyId);
  bytes.set(signature, 4);
  return `\u2014 ${name} ${Buffer.from(bytes).toString("base64")}`;
}

/**
 * Splits a note into its text and signature lines. The text is separated from the signatures by the last
 * empty line; at most 100 signatures are read.
 *
 * @param note The note.
 * @returns The text and the signatures (not checked).
 * @throws ProveviError when it is not a note.
 */
export function parseNote(note: string): Note {
  const bad = (why: string) => new ProveviError(`not a signed note: ${why}`);
  if (note.length > 1_000_000) throw bad("longer than 1 MB");
  // deno-lint-ignore no-control-regex -- C2SP: a note holds no control character but the newline
  if (/[\x00-\x09\x0b-\x1f]/.test(note)) throw bad("it holds a control character");
  if (!note.endsWith("\n")) throw bad("it does not end with a newline");
  const split = note.lastIndexOf("\n\n");
  if (split < 0) throw bad("no empty line before the signatures");
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split("\n");
  if (lines.length > 100) throw bad("more than 100 signatures");
  const signatures: NoteSignature[] = [];
  for (const line of lines) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/]+={0,2})$/u.exec(line);
    if (!m || !isKeyName(m[1]!) || m[2]!.length % 4 !== 0) {
      throw bad(`a signature line is malformed: ${line}`);
    }
    const bytes = new Uint8Array(Buffer.from(m[2]!, "base64"));
    if (bytes.length < 5) throw bad(`a signature is too short: ${line}`);
    signatures.push({
      name: m[1]!,
      keyId: new DataView(bytes.buffer, bytes.byteOffset).getUint32(0),
      signature: bytes.subarray(4),
      line,
    });
  }
  if (signatures.length === 0) throw bad("no signature");
  return { text, signatures };
}

/**
 * Opens a note with trusted verifiers: signatures of unknown keys are passed over; a known key's signature that
 * fails is in `failed` (C2SP: a client should then refuse the whole note).
 *
 * @param note The note.
 * @param verifiers The trusted keys.
 * @returns The text, the verifiers whose signatures verified, and those whose signatures failed.
 * @throws ProveviError when it is not a note.
 */
export function openNote(
  note: string,
  verifiers: readonly NoteVerifier[],
): { text: string; verified: NoteVerifier[]; failed: NoteVerifier[]; signatures: NoteSignature[] } {
  const parsed = parseNote(note);
  const message = encoder.encode(parsed.text);
  const verified: NoteVerifier[] = [];
  const failed: NoteVerifier[] = [];
  for (const s of parsed.signatures) {
    const v = verifiers.find((k) => k.name === s.name && k.keyId === s.keyId);
    if (!v) continue;
    const list = v.verify(message, s.signature) ? verified : failed;
    if (!list.includes(v)) list.push(v);
  }
  return { text: parsed.text, verified, failed, signatures: parsed.signatures };
}

/** A key ID as 8 hex digits. */
export function hex8(keyId: number): string {
  return keyId.toString(16).padStart(8, "0");
}
