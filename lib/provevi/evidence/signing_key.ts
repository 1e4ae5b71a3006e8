/**
 * Ed25519 key pairs for signing a run's seal, through WebCrypto (built into Deno). A key file is JSON in the form
 * securesystemslib reads (`keytype`, `scheme`, `keyval.public`, hex), with its `keyid`; the private file also has
 * `keyval.private`, the 32-byte seed in hex, and is readable by its owner only.
 * @module
 */
import { createPrivateKey, type KeyObject, sign as signWithNode } from "node:crypto";
import canonicalize from "canonicalize";
import { ProveviError } from "./errors.ts";
import { closeNoWait, openNoWaitSync, readNoWaitSync } from "./open_file.ts";
import { sha256Hex } from "./hash.ts";

/** A public key that may sign runs, as a key file holds it. */
export interface PublicKeyFile {
  keyid: string;
  keytype: "ed25519";
  scheme: "ed25519";
  keyval: { public: string };
}

/** A private key file: the public key file and the seed. */
export interface PrivateKeyFile {
  keyid: string;
  keytype: "ed25519";
  scheme: "ed25519";
  keyval: { public: string; private: string };
}

/** A key ready to sign with. */
export interface SigningKey {
  keyid: string;
  key: CryptoKey;
}

/** A key ready to check signatures with. */
export interface TrustedKey {
  keyid: string;
  key: CryptoKey;
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The ID of an Ed25519 public key: the SHA-256 of the RFC 8785 JSON of `{keytype, scheme, keyval: {public}}`,
 * as securesystemslib computes a key ID, so that tools of the in-toto family name the key the same way.
 *
 * @param publicHex The 32-byte public key in lowercase hex.
 * @returns 64 lowercase hex digits.
 * @example
 * ```ts
 * import { keyIdOf } from "./signing_key.ts";
 * keyIdOf("00".repeat(32)).length; // 64
 * ```
 */
export function keyIdOf(publicHex: string): string {
  return sha256Hex(canonicalize({ keytype: "ed25519", scheme: "ed25519", keyval: { public: publicHex } })!);
}

/**
 * Makes a new Ed25519 key pair.
 *
 * @returns The private key file's content and the public key file's content.
 * @example
 * ```ts
 * import { generateKeyPair } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const { privateKey, publicKey } = await generateKeyPair();
 * assert.match(publicKey.keyid, /^[0-9a-f]{64}$/);
 * assert.equal(privateKey.keyid, publicKey.keyid);
 * ```
 */
export async function generateKeyPair(): Promise<{ privateKey: PrivateKeyFile; publicKey: PublicKeyFile }> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
  const pub = toHex(new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey)));
  const keyid = keyIdOf(pub);
  const base = { keyid, keytype: "ed25519" as const, scheme: "ed25519" as const };
  return {
    privateKey: { ...base, keyval: { public: pub, private: toHex(fromBase64Url(jwk.d!)) } },
    publicKey: { ...base, keyval: { public: pub } },
  };
}

/**
 * Writes a new key pair: `path` (the private key, mode 0600) and `path.pub`. Refuses to replace a file.
 *
 * @param path Where the private key goes.
 * @returns The key's ID and the two paths.
 * @throws ProveviError when either file exists or cannot be written.
 * @example
 * ```ts
 * import { ProveviError, writeKeyPair } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const path = `${await Deno.makeTempDir()}/signing.key`;
 * const { publicPath } = await writeKeyPair(path);
 * assert.equal(publicPath, `${path}.pub`);
 * await assert.rejects(writeKeyPair(path), ProveviError); // it never replaces a key
 * ```
 */
export async function writeKeyPair(
  path: string,
): Promise<{ keyid: string; privatePath: string; publicPath: string }> {
  const { privateKey, publicKey } = await generateKeyPair();
  const publicPath = `${path}.pub`;
  for (const p of [path, publicPath]) {
    try {
      await Deno.lstat(p);
      throw new ProveviError(`cannot write the key pair: ${p} exists; choose another name or remove it`);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  try {
    await Deno.writeTextFile(path, JSON.stringify(privateKey, null, 2) + "\n", {
      mode: 0o600,
      createNew: true,
    });
    await Deno.chmod(path, 0o600); // the umask may have dropped bits, never added them; this makes it exact
    await Deno.writeTextFile(publicPath, JSON.stringify(publicKey, null, 2) + "\n", { createNew: true });
  } catch (error) {
    throw new ProveviError(`cannot write the key pair at ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return { keyid: publicKey.keyid, privatePath: path, publicPath };
}

/**
 * Reads a private key file to sign with.
 *
 * @param path The file `prove keygen` wrote.
 * @returns The key and its ID.
 * @throws ProveviError when the file cannot be read, is not such a key, or others than its owner may read it.
 * @example
 * ```ts
 * import { readSigningKey, writeKeyPair } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const path = `${await Deno.makeTempDir()}/signing.key`;
 * const { keyid } = await writeKeyPair(path);
 * assert.equal((await readSigningKey(path)).keyid, keyid);
 * ```
 */
export async function readSigningKey(path: string): Promise<SigningKey> {
  // Synchronous reads: the key file is small, and a trip to Deno's file thread costs more than reading it.
  const text = readKeyText(path, "signing key");
  if (Deno.build.os !== "windows") {
    const mode = Deno.statSync(path).mode ?? 0;
    if ((mode & 0o077) !== 0) {
      throw new ProveviError(
        `the signing key ${path} may be read by others (mode ${
          (mode & 0o777).toString(8)
        }); run chmod 600 ${path}`,
      );
    }
  }
  // A key file read before, with the same text, is not parsed, imported and probed again: a caller that signs
  // many runs reads its key for each at the cost of one read.
  const cached = signingKeys.get(path);
  if (cached?.text === text) return cached.key;
  const file = parseKey(text, path, true) as PrivateKeyFile;
  const x = toBase64Url(fromHex(file.keyval.public));
  const d = toBase64Url(fromHex(file.keyval.private));
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey(
      "jwk",
      { kty: "OKP", crv: "Ed25519", x, d },
      { name: "Ed25519" },
      false,
      [
        "sign",
      ],
    );
    // A seed that does not give the public key beside it would sign as another key than its ID says.
    const probe = new Uint8Array(await crypto.subtle.sign("Ed25519", key, new Uint8Array(1)));
    const pub = await importPublic(file.keyval.public);
    if (!await crypto.subtle.verify("Ed25519", pub, probe, new Uint8Array(1))) throw new Error("mismatch");
    keepSynchronous(key, { x, d }, probe);
  } catch (error) {
    throw new ProveviError(
      `the signing key ${path} is not an Ed25519 key pair (its private part does not match its public part); make one with prove keygen`,
      { cause: error },
    );
  }
  const signing = { keyid: file.keyid, key };
  signingKeys.set(path, { text, key: signing });
  return signing;
}

/**
 * Signs bytes with a signing key: the Ed25519 signature (64 bytes). A key read by {@linkcode readSigningKey}
 * signs synchronously, through the same key in node:crypto (built into Deno too): WebCrypto's `sign` is a
 * round trip through Deno's thread pool, which at a run's seal costs several times the signature itself.
 * Ed25519 is deterministic, so both give the same bytes; WebCrypto signs with a key made elsewhere.
 *
 * @param key The signing key.
 * @param bytes What to sign.
 * @returns The signature.
 */
export async function signBytes(key: SigningKey, bytes: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const same = synchronous.get(key.key);
  if (same) return new Uint8Array(signWithNode(null, bytes, same));
  return new Uint8Array(await crypto.subtle.sign("Ed25519", key.key, bytes as Uint8Array<ArrayBuffer>));
}

/** WebCrypto keys read from key files, as node:crypto keys, for {@linkcode signBytes}. */
const synchronous = new WeakMap<CryptoKey, KeyObject>();

/** Keeps the node:crypto form of a key when it signs the probe with the very bytes WebCrypto gave. */
function keepSynchronous(key: CryptoKey, jwk: { x: string; d: string }, probe: Uint8Array): void {
  try {
    const same = createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", ...jwk }, format: "jwk" });
    const theirs = new Uint8Array(signWithNode(null, new Uint8Array(1), same));
    if (theirs.length === probe.length && theirs.every((b, i) => b === probe[i])) synchronous.set(key, same);
  } catch { /* WebCrypto signs alone */ }
}

/** The keys read by {@linkcode readSigningKey}, by path, with the text of the file they were read from. */
const signingKeys = new Map<string, { text: string; key: SigningKey }>();

/**
 * Reads a public key file (or a private one, of which only the public part is used) to trust.
 *
 * @param path A `.pub` file that `prove keygen` wrote.
 * @returns The key and its ID.
 * @throws ProveviError when the file cannot be read or is not such a key.
 * @example
 * ```ts
 * import { readTrustedKey, writeKeyPair } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const path = `${await Deno.makeTempDir()}/signing.key`;
 * const { keyid, publicPath } = await writeKeyPair(path);
 * assert.equal((await readTrustedKey(publicPath)).keyid, keyid);
 * ```
 */
export async function readTrustedKey(path: string): Promise<TrustedKey> {
  const file = parseKey(readKeyText(path, "trusted key"), path, false);
  return { keyid: file.keyid, key: await importPublic(file.keyval.public) };
}

/** The most bytes of a key file: a few hundred, with room to spare. */
const KEY_FILE_MAX_BYTES = 64 * 1024;

/**
 * A key file's text, read as a plain file of at most {@linkcode KEY_FILE_MAX_BYTES} (a link followed): opened
 * without waiting, so that a FIFO given as the key is refused in one line, not waited on for ever.
 */
function readKeyText(path: string, what: string): string {
  const cannot = (why: string, cause?: unknown) =>
    new ProveviError(`cannot read the ${what} ${path}: ${why}`, cause === undefined ? undefined : { cause });
  let opened: ReturnType<typeof openNoWaitSync>;
  try {
    opened = openNoWaitSync(path, { follow: true });
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? "there is no such file"
      : (error as Error).message.split("\n")[0]!;
    throw cannot(why, error);
  }
  try {
    if (!opened.info.isFile) throw cannot(`it is ${opened.info.kind}; give the path of a key file`);
    const bytes = new Uint8Array(KEY_FILE_MAX_BYTES + 1);
    let n = 0;
    for (let got = 1; got > 0 && n < bytes.length; n += got) {
      got = readNoWaitSync(opened.fd, bytes.subarray(n));
    }
    if (n > KEY_FILE_MAX_BYTES) {
      throw cannot(`it is larger than ${KEY_FILE_MAX_BYTES} bytes; a key file is short`);
    }
    return new TextDecoder().decode(bytes.subarray(0, n));
  } finally {
    closeNoWait(opened.fd);
  }
}

function parseKey(text: string, path: string, needPrivate: boolean): PublicKeyFile | PrivateKeyFile {
  let k: Record<string, unknown> & { keyval?: Record<string, unknown> };
  try {
    k = JSON.parse(text);
  } catch (error) {
    throw new ProveviError(`${path} is not a key file: it is not JSON; make one with prove keygen`, {
      cause: error,
    });
  }
  const ok = typeof k === "object" && k !== null && k.keytype === "ed25519" && k.scheme === "ed25519" &&
    typeof k.keyval === "object" && k.keyval !== null && typeof k.keyval.public === "string" &&
    HEX64.test(k.keyval.public) && (!needPrivate ||
      (typeof k.keyval.private === "string" && HEX64.test(k.keyval.private)));
  if (!ok) {
    throw new ProveviError(
      `${path} is not an Ed25519 ${
        needPrivate ? "private" : "public"
      } key file (keytype and scheme ed25519, keyval.public${
        needPrivate ? " and keyval.private" : ""
      } in hex); make one with prove keygen`,
    );
  }
  const keyid = keyIdOf(k.keyval!.public as string);
  if (k.keyid !== undefined && k.keyid !== keyid) {
    throw new ProveviError(
      `${path} has keyid ${JSON.stringify(k.keyid)}, but its public key's ID is ${keyid}`,
    );
  }
  return { ...(k as unknown as PublicKeyFile), keyid };
}

function importPublic(hex: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", fromHex(hex), { name: "Ed25519" }, false, ["verify"]);
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function toBase64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array {
  const b64 = text.replaceAll("-", "+").replaceAll("_", "/");
  return Uint8Array.from(atob(b64 + "=".repeat((4 - b64.length % 4) % 4)), (c) => c.charCodeAt(0));
}
