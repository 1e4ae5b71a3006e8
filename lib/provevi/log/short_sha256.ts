/**
 * SHA-256 (FIPS 180-4) of short inputs, in JavaScript, for the Merkle tree's hashes. A call into `node:crypto`
 * makes a hash object and a Buffer and crosses into Rust and back for each update and the digest: some 5 µs on
 * an idle machine and 15–25 µs on a busy one, while one 64-byte block here takes well under 1 µs. A proof from
 * tiles hashes hundreds of 65-byte nodes (two blocks each), and an append hashes each leaf (a few hundred
 * bytes), so both go through this; longer inputs go to `node:crypto`, whose native code is faster per byte.
 * @module
 */
import { createHash } from "node:crypto";

/** Inputs up to this many bytes are hashed here; longer ones by `node:crypto`. */
export const SHORT_INPUT = 1024;

const K = new Int32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);
const INITIAL = new Int32Array([
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
]);

// Made once and reused: the padded message, the schedule and the state (the hash runs on one thread, and no call
// is re-entered).
const padded = new Uint8Array(SHORT_INPUT + 128);
const W = new Int32Array(64);
const H = new Int32Array(8);

/**
 * SHA-256 of a domain byte and one or two byte strings, `SHA-256(prefix || first || second)`: RFC 9162's leaf
 * hash is `(0x00, leaf)` and its node hash `(0x01, left, right)`.
 *
 * @param prefix The first byte (0 to 255).
 * @param first The bytes after it.
 * @param second More bytes after those, if any.
 * @returns 32 bytes.
 * @example
 * ```ts
 * import { sha256Prefixed } from "./short_sha256.ts";
 * sha256Prefixed(0, new Uint8Array()).length; // 32
 * ```
 */
export function sha256Prefixed(prefix: number, first: Uint8Array, second?: Uint8Array): Uint8Array {
  const length = 1 + first.length + (second?.length ?? 0);
  if (length > SHORT_INPUT) {
    const hash = createHash("sha256").update(new Uint8Array([prefix])).update(first);
    if (second) hash.update(second);
    const digest = hash.digest();
    return new Uint8Array(digest.buffer, digest.byteOffset, digest.length);
  }
  const end = ((length + 9 + 63) >> 6) * 64; // the message, 0x80 and the 64-bit length, in whole blocks
  padded[0] = prefix;
  padded.set(first, 1);
  if (second) padded.set(second, 1 + first.length);
  padded[length] = 0x80;
  padded.fill(0, length + 1, end - 4);
  const bits = length * 8; // below 2^32: the input is short
  padded[end - 4] = bits >>> 24;
  padded[end - 3] = bits >>> 16;
  padded[end - 2] = bits >>> 8;
  padded[end - 1] = bits;
  H.set(INITIAL);
  for (let b = 0; b < end; b += 64) compress(padded, b);
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const h = H[i]!;
    out[i * 4] = h >>> 24;
    out[i * 4 + 1] = h >>> 16;
    out[i * 4 + 2] = h >>> 8;
    out[i * 4 + 3] = h;
  }
  return out;
}

/** One block of the compression function, on {@linkcode H}. */
function compress(m: Uint8Array, at: number): void {
  for (let t = 0; t < 16; t++) {
    const j = at + t * 4;
    W[t] = (m[j]! << 24) | (m[j + 1]! << 16) | (m[j + 2]! << 8) | m[j + 3]!;
  }
  for (let t = 16; t < 64; t++) {
    const x = W[t - 15]!;
    const y = W[t - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[t] = (W[t - 16]! + s0 + W[t - 7]! + s1) | 0;
  }
  let a = H[0]!, b = H[1]!, c = H[2]!, d = H[3]!, e = H[4]!, f = H[5]!, g = H[6]!, h = H[7]!;
  for (let t = 0; t < 64; t++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[t]! + W[t]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0;
  H[1] = (H[1]! + b) | 0;
  H[2] = (H[2]! + c) | 0;
  H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0;
  H[5] = (H[5]! + f) | 0;
  H[6] = (H[6]! + g) | 0;
  H[7] = (H[7]! + h) | 0;
}
