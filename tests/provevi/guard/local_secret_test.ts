import assert from "node:assert/strict";
import {
  bearerOf,
  newSecret,
  sameSecret,
  secretDigest,
  writePrivateFile,
} from "../../../lib/provevi/guard/local_secret.ts";

Deno.test("newSecret() makes 32 random bytes as hex, a new one each time", () => {
  const a = newSecret();
  assert.match(a, /^[0-9a-f]{64}$/);
  assert.notEqual(a, newSecret());
});

Deno.test("sameSecret() is true for the secret or its digest only, whatever the length of what was given", () => {
  const secret = newSecret();
  assert.ok(sameSecret(secret, secret));
  assert.ok(sameSecret(secret, secretDigest(secret)));
  for (
    const given of [null, "", secret.slice(0, 63), secret + "0", secret.toUpperCase(), "x".repeat(10_000)]
  ) {
    assert.equal(sameSecret(given, secret), false, String(given).slice(0, 20));
  }
});

Deno.test("bearerOf() reads an Authorization: Bearer credential, and nothing else", () => {
  const of = (authorization?: string) =>
    bearerOf(new Request("http://127.0.0.1/", { headers: authorization ? { authorization } : {} }));
  assert.equal(of("Bearer abc"), "abc");
  assert.equal(of("bearer  abc "), "abc");
  assert.equal(of(), null);
  assert.equal(of("Basic abc"), null);
  assert.equal(of("Bearer a b"), null);
  assert.equal(of("Bearer"), null);
});

Deno.test("writePrivateFile() writes a file of mode 0600 in a new folder of mode 0700, replacing an old one whole", async () => {
  const base = await Deno.makeTempDir({ prefix: "guard-" });
  try {
    const path = `${base}/prove/serve-4318.json`;
    await writePrivateFile(path, "one");
    await writePrivateFile(path, "two");
    assert.equal(await Deno.readTextFile(path), "two");
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(`${base}/prove`)).mode! & 0o777, 0o700);
    assert.deepEqual([...Deno.readDirSync(`${base}/prove`)].map((e) => e.name), ["serve-4318.json"]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
