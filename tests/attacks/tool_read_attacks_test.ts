/**
 * The built-in tools on an input of gigabytes: `read_file` read the whole file to give its first megabyte, and
 * `grep_file` read each file whole to split it into lines, so one call held all of the input in the sandbox's
 * memory (a sparse input of 1 GiB: all of it). Each now reads a piece at a time: the
 * head it gives, the lines it tests (a line past 64 KiB tested and given in its first 64 KiB).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { measuredInChild } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("tool read attacks");
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** A run folder whose input/big.csv is `size` bytes: a header, zeros (sparse), then two lines at its end. */
async function bigInput(size: number): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "attack-tool-read-" });
  for (const d of ["input", "output", "scratch"]) await Deno.mkdir(join(root, d));
  const path = join(root, "input", "big.csv");
  await Deno.writeTextFile(path, "region,revenue\n");
  const tail = new TextEncoder().encode("\nneedle,42\nlast,1\n");
  await Deno.truncate(path, size - tail.length);
  using file = await Deno.open(path, { append: true });
  for (let done = 0; done < tail.length;) done += await file.write(tail.subarray(done));
  return root;
}

Deno.test("read_file of an input of 1 GiB gives its first megabyte, reading no more", async () => {
  const root = await bigInput(GiB);
  try {
    const { grew, got } = await measuredInChild<{ length: number; last: string }>(
      "./_tool_read_work.ts",
      "read",
      root,
      "/input/big.csv",
    );
    console.log(
      `read_file, 1 GiB: ${Math.round(grew / MiB)} MiB more memory: ${got.length} characters, "${got.last}"`,
    );
    tally.add("read_file of 1 GiB", {
      stopped: grew < 64 * MiB,
      recorded: got.last === `[cut at ${MiB} of ${GiB} bytes]`,
    });
    assert.ok(grew < 64 * MiB, `read_file took ${Math.round(grew / MiB)} MiB`);
    assert.equal(got.last, `[cut at ${MiB} of ${GiB} bytes]`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("grep_file over an input of 1 GiB finds the lines at its end, reading a piece at a time", async () => {
  const root = await bigInput(GiB);
  try {
    const { grew, got } = await measuredInChild<
      { path: string; line: number; text: string; length: number }[]
    >(
      "./_tool_read_work.ts",
      "grep",
      root,
      "^(needle|region)",
    );
    console.log(`grep_file, 1 GiB: ${Math.round(grew / MiB)} MiB more memory: ${JSON.stringify(got)}`);
    const want = [
      { path: "/input/big.csv", line: 1, text: "region,revenue", length: 14 },
      { path: "/input/big.csv", line: 3, text: "needle,42", length: 9 },
    ];
    tally.add("grep_file over 1 GiB", {
      stopped: grew < 64 * MiB,
      recorded: JSON.stringify(got) === JSON.stringify(want),
    });
    assert.ok(grew < 64 * MiB, `grep_file took ${Math.round(grew / MiB)} MiB`);
    // the zeros are one line of 1 GiB: tested and passed over in its first 64 KiB
    assert.deepEqual(got, want);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("tool read attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
