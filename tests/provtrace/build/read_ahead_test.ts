import assert from "node:assert/strict";
import { readAhead } from "../../../lib/provtrace/build/_read_ahead.ts";

Deno.test("readAhead gives each item's read in order, with at most `width` reads started beyond the one taken", async () => {
  const started: number[] = [];
  const take = readAhead(5, (i) => {
    started.push(i);
    return Promise.resolve(i * 10);
  }, 2);
  assert.deepEqual(started, []);
  assert.equal(await take(0), 0);
  assert.deepEqual(started, [0, 1]);
  assert.equal(await take(1), 10);
  assert.deepEqual(started, [0, 1, 2]);
  for (const i of [2, 3, 4]) assert.equal(await take(i), i * 10);
  assert.deepEqual(started, [0, 1, 2, 3, 4]);
  assert.throws(() => take(4), RangeError);
  assert.throws(() => readAhead(1, () => Promise.resolve(0), 0), RangeError);
});

Deno.test("a read that fails ahead of its turn is its taker's error, not an unhandled rejection", async () => {
  const take = readAhead(3, (i) => i === 2 ? Promise.reject(new Error("no run 2")) : Promise.resolve(i), 3);
  assert.equal(await take(0), 0);
  // The failed read has settled by now; an unhandled rejection would fail this test.
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(await take(1), 1);
  await assert.rejects(take(2), /no run 2/);
});
