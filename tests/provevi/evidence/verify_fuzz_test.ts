import assert from "node:assert/strict";
import { join } from "node:path";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { ProveviError } from "../../../lib/provevi/evidence/errors.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { showRun } from "../../../cli/_commands.ts";
import { SAMPLE_RUN_ID } from "../_sample_run.ts";
import { fixtureCopy } from "../_tamper.ts";

/** mulberry32: a small seeded generator, so that a failure names the seed and the step that found it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = 17;
const BUDGET_MS = 3000;
const MAX_STEPS = 400;
// What breaks a reader more often than a random byte: escapes, quotes, newlines, bytes that are not UTF-8.
const PIECES = [
  '"',
  "\\",
  "\n",
  "\\ud800",
  "\\udc00",
  "\\u0000",
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  "null",
  "1e999",
  "-0",
]
  .map((p) => new TextEncoder().encode(p)).concat([
    new Uint8Array([0xff]),
    new Uint8Array([0xc3]),
    new Uint8Array([0xed, 0xa0, 0x80]),
  ]);

function mutate(bytes: Uint8Array, next: () => number): Uint8Array {
  const pick = (n: number) => Math.floor(next() * n);
  const at = pick(bytes.length + 1);
  switch (pick(5)) {
    case 0: { // flip one byte
      const out = bytes.slice();
      if (out.length) out[Math.min(at, out.length - 1)] = pick(256);
      return out;
    }
    case 1: { // insert a piece
      const piece = PIECES[pick(PIECES.length)]!;
      return new Uint8Array([...bytes.subarray(0, at), ...piece, ...bytes.subarray(at)]);
    }
    case 2: // cut the file
      return bytes.slice(0, at);
    case 3: { // remove a run of bytes
      return new Uint8Array([...bytes.subarray(0, at), ...bytes.subarray(at + 1 + pick(40))]);
    }
    default: // arbitrary bytes
      return Uint8Array.from({ length: pick(200) }, () => pick(256));
  }
}

Deno.test("verifyRun() gives a verdict for arbitrary bytes in each file of a run folder, never an exception (seeded, bounded)", async () => {
  const { dir, folder } = await fixtureCopy();
  try {
    const payloads = [...Deno.readDirSync(join(folder, "evidence", "payloads"))].map((e) => e.name).sort();
    const files = [
      "evidence/events.jsonl",
      "evidence/manifest.json",
      ...payloads.map((p) => `evidence/payloads/${p}`),
      "output/answer.txt",
      "bundle.json",
      "evidence/attestation.dsse.json",
    ];
    const next = random(SEED);
    const started = performance.now();
    let steps = 0;
    const io = { out: () => {}, err: () => {}, progress: () => {}, terminal: false };
    for (; steps < MAX_STEPS && performance.now() - started < BUDGET_MS; steps++) {
      const file = files[Math.floor(next() * files.length)]!;
      const path = join(folder, file);
      const original = await Deno.readFile(path).catch(() => new Uint8Array());
      let bytes: Uint8Array = original;
      for (let k = 1 + Math.floor(next() * 3); k > 0; k--) bytes = mutate(bytes, next);
      await Deno.writeFile(path, bytes);
      const record = new FileRunRecord(SAMPLE_RUN_ID, folder);
      let check;
      try {
        check = await verifyRun(record);
      } catch (error) {
        assert.fail(`seed ${SEED}, step ${steps}, ${file}: verifyRun threw ${(error as Error).stack}`);
      }
      assert.equal(typeof check.ok, "boolean");
      assert.ok(
        check.problems.map((p) => p.message).every((p) => typeof p === "string" && !p.includes("\n")),
      );
      assert.equal(check.ok, check.problems.length === 0);
      // prove show reads the same bytes: it may refuse with one line, never crash.
      await showRun(record, io as never, { json: true }).catch((error) => {
        if (!(error instanceof ProveviError)) {
          assert.fail(`seed ${SEED}, step ${steps}, ${file}: prove show threw ${(error as Error).stack}`);
        }
      });
      if (original.length || file === "evidence/events.jsonl") await Deno.writeFile(path, original);
      else await Deno.remove(path);
    }
    assert.ok(steps > 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
