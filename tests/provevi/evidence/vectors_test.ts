import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { readTrustedKey } from "../../../lib/provevi/evidence/signing_key.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";

const FIXTURES = new URL("../../../fixtures/", import.meta.url).pathname;

interface VectorEntry {
  name: string;
  check: number;
  folder: string;
  trust: string | null;
  ok: boolean;
  codes: string[];
  problems: { code: string; file: string | null; line: number | null; seq: number | null; text: string }[];
}

const { vectors } = JSON.parse(await Deno.readTextFile(join(FIXTURES, "evidence-vectors.json"))) as {
  vectors: VectorEntry[];
};

Deno.test("the test vectors cover every check of the format, and each fails but the five that verify", () => {
  // Check 10, the log's, needs a log key and its store's log: tests/provevi/log and tests/attacks test it.
  assert.deepEqual(
    [...new Set(vectors.map((v) => v.check))].sort((a, b) => a - b),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 11],
  );
  assert.deepEqual(vectors.filter((v) => v.ok).map((v) => v.name), [
    "number-ecmascript-form",
    "signed",
    "time-backwards",
    "subjects-utf16-order",
    "attestation-base64url",
    "assessments",
    "packed",
    "packed-signed",
  ]);
});

for (const v of vectors) {
  Deno.test(`verifyRun() reports exactly the problems of the test vector ${v.name} (check ${v.check})`, async () => {
    const folder = join(FIXTURES, v.folder);
    const check = await verifyRun(new FileRunRecord(basename(folder), folder), {
      ...(v.trust ? { trust: [await readTrustedKey(join(FIXTURES, v.trust))] } : {}),
    });
    assert.deepEqual(
      check.problems.map((p) => ({ code: p.code, file: p.file, line: p.line, seq: p.seq, text: p.message })),
      v.problems,
    );
    assert.deepEqual(v.codes, v.problems.map((p) => p.code));
    assert.equal(check.ok, v.ok);
  });
}

Deno.test("prove verify refuses a --trust key file whose keyid is not its key's ID before any verdict, under --json too", async () => {
  const { bufferIo } = await import("../../../cli/_io.ts");
  const { prove } = await import("../../../cli/prove.ts");
  const io = bufferIo();
  const args = ["verify", join(FIXTURES, "runs", "run-20261129T120000Z-0badc0de")];
  const code = await prove([...args, "--trust", join(FIXTURES, "keys", "wrong-keyid.key.pub"), "--json"], io);
  assert.deepEqual([code, io.stdout, io.stderr.length], [1, [], 1]);
  assert.match(
    io.stderr[0]!,
    /^prove: .*wrong-keyid\.key\.pub has keyid "0{64}", but its public key's ID is [0-9a-f]{64}$/,
  );
});

Deno.test("prove verify: a --log-key that is neither a verifier key nor a file is a wrong command line (exit 2); a key file that holds no key is exit 1", async () => {
  const { bufferIo } = await import("../../../cli/_io.ts");
  const { prove } = await import("../../../cli/prove.ts");
  const run = join(FIXTURES, "runs", "run-20261129T120000Z-0badc0de");
  const notKey = new URL("../../../README.md", import.meta.url).pathname;
  for (
    const [args, code, message] of [
      [["--log-key", "garbage"], 2, /^prove: garbage is neither a verifier key/],
      [["--log-key", notKey], 1, /^prove: "# MahaCata" is not a verifier key/],
      [["--trust", notKey], 1, /^prove: .*README\.md is not a key file/],
    ] as const
  ) {
    const io = bufferIo();
    assert.equal(await prove(["verify", run, ...args, "--json"], io), code, args.join(" "));
    assert.deepEqual([io.stdout, io.stderr.length], [[], 1], args.join(" "));
    assert.match(io.stderr[0]!, message);
  }
});
