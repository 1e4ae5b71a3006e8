import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256Prefixed, SHORT_INPUT } from "../../../lib/provevi/log/short_sha256.ts";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

function nodeSha256(...parts: Uint8Array[]): string {
  const hash = createHash("sha256");
  for (const p of parts) hash.update(p);
  return hash.digest("hex");
}

Deno.test("sha256Prefixed() gives FIPS 180-4's vectors, less their first byte as the prefix", () => {
  const text = (s: string) => new TextEncoder().encode(s);
  assert.equal(
    hex(sha256Prefixed(0x61, text("bc"))),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assert.equal(
    hex(sha256Prefixed(0x61, text("bcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
});

Deno.test("sha256Prefixed() agrees with node:crypto at every length across the block and short-input edges", () => {
  const bytes = crypto.getRandomValues(new Uint8Array(SHORT_INPUT + 200));
  for (let n = 0; n <= SHORT_INPUT + 200; n++) {
    const data = bytes.subarray(0, n);
    const prefix = n % 256;
    assert.equal(
      hex(sha256Prefixed(prefix, data)),
      nodeSha256(new Uint8Array([prefix]), data),
      `length ${n}`,
    );
    const cut = n >> 1;
    assert.equal(
      hex(sha256Prefixed(prefix, data.subarray(0, cut), data.subarray(cut))),
      nodeSha256(new Uint8Array([prefix]), data),
      `length ${n} in two parts`,
    );
  }
});

Deno.test("sha256Prefixed() gives a fresh array each call, which a later call leaves as it was", () => {
  const a = sha256Prefixed(1, new Uint8Array(32), new Uint8Array(32));
  const copy = hex(a);
  sha256Prefixed(0, new Uint8Array(300));
  assert.equal(hex(a), copy);
  assert.equal(a.length, 32);
  assert.equal(a.byteOffset, 0);
});
