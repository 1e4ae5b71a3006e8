/**
 * `prove payload` prints a payload, JSON pretty-printed: a run's payload may be any JSON up to 512 MiB of text,
 * and one of many small values (`[{},{},…]`) takes the heap at some 30 times its text once parsed. The printing
 * must weigh it first, as every reader that parses a text whole does (3 GiB, the format's bound), and print a
 * heavier one as it is.
 * @module
 */
import assert from "node:assert/strict";
import { measuredInChild } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const MiB = 1024 * 1024;
const tally = new Tally("payload attacks");

Deno.test("prove payload prints a payload of 100 MiB of small values as its text, in bounded memory", async () => {
  // 35 million empty objects: 100 MiB of text, past 3 GiB of weight
  const { grew, ms, got } = await measuredInChild<{ printed: number; text: number }>(
    "./_payload_shown_work.ts",
    "showManyValues",
    35_000_000,
  );
  console.log(`100 MiB of {}: ${Math.round(grew / MiB)} MiB more memory, ${ms} ms, ${JSON.stringify(got)}`);
  const ok = got.printed === got.text && grew < 768 * MiB;
  tally.add("100 MiB of small values", { stopped: ok, recorded: got.printed === got.text });
  console.log(tally.line());
  assert.ok(ok, `${Math.round(grew / MiB)} MiB, ${JSON.stringify(got)}`);
});
