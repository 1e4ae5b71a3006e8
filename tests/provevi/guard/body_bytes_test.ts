import assert from "node:assert/strict";
import { readBytesCapped } from "../../../lib/provevi/guard/body_bytes.ts";

/** A stream of these chunks, and whether it was cancelled. */
function chunks(parts: number[][]): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let cancelled = false;
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < parts.length) c.enqueue(new Uint8Array(parts[i++]!));
      else c.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}

const tooLarge = (n: number) => new RangeError(`over: ${n}`);

Deno.test("readBytesCapped() puts a body of a declared length straight in one array, chunk after chunk", async () => {
  const parts = [[1, 2, 3], [4], [], [5, 6]];
  const plain = await readBytesCapped(chunks(parts).stream, { max: 100, tooLarge });
  const declared = await readBytesCapped(chunks(parts).stream, { max: 100, tooLarge, declared: 6 });
  assert.deepEqual(declared, plain);
  assert.deepEqual([...declared], [1, 2, 3, 4, 5, 6]);
  // shorter than declared: what came
  assert.deepEqual([...await readBytesCapped(chunks([[7, 8]]).stream, { max: 100, tooLarge, declared: 6 })], [
    7,
    8,
  ]);
  // a declared length past the cap is no promise: read as any body, and refused past the cap
  await assert.rejects(
    readBytesCapped(chunks([[1, 2, 3], [4, 5]]).stream, { max: 4, tooLarge, declared: 99 }),
    /over: 5/,
  );
});

Deno.test("readBytesCapped() refuses a body that runs past its declared length, and cancels it", async () => {
  const body = chunks([[1, 2, 3], [4, 5]]);
  await assert.rejects(
    readBytesCapped(body.stream, { max: 100, tooLarge, declared: 4 }),
    /runs past the 4 bytes its request declared/,
  );
  assert.ok(body.cancelled());
});
