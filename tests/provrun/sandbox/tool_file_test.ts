import assert from "node:assert/strict";
import { join } from "node:path";
import { fileLines, readHead } from "../../../lib/provrun/sandbox/tool_file.ts";
import { IrregularFile } from "../../../lib/provevi/evidence/open_file.ts";

const MiB = 1024 * 1024;

async function withFile(content: string | Uint8Array, fn: (path: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tool-file-" });
  try {
    const path = join(dir, "f");
    if (typeof content === "string") await Deno.writeTextFile(path, content);
    else await Deno.writeFile(path, content);
    await fn(path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const lines = async (path: string, longest = 64 * 1024) => await Array.fromAsync(fileLines(path, longest));

Deno.test("fileLines gives each line in order, a last one without its newline too, and none of an empty file", async () => {
  await withFile("a\nb\n\nc", async (p) => assert.deepEqual(await lines(p), ["a", "b", "", "c"]));
  await withFile("a\n", async (p) => assert.deepEqual(await lines(p), ["a"]));
  await withFile("\n", async (p) => assert.deepEqual(await lines(p), [""]));
  await withFile("", async (p) => assert.deepEqual(await lines(p), []));
});

Deno.test("fileLines decodes a character whose bytes straddle two reads", async () => {
  // "é" is two bytes: put its first at the last byte of the first read (1 MiB)
  const text = "x".repeat(MiB - 1) + "é\nnext ü\n";
  await withFile(
    text,
    async (p) => assert.deepEqual(await lines(p, 2 * MiB), ["x".repeat(MiB - 1) + "é", "next ü"]),
  );
});

Deno.test("fileLines cuts a long line to its first characters and reads on past the rest of it", async () => {
  const long = "é".repeat(3 * MiB); // 6 MiB of bytes, several reads, a character straddling each read's end
  await withFile(`head\n${long}\nafter ü\nend`, async (p) => {
    const got = await lines(p, 1000);
    assert.deepEqual(got.map((l) => l.length), [4, 1000, 7, 3]);
    assert.deepEqual([got[0], got[1]!.slice(0, 3), got[2], got[3]], ["head", "ééé", "after ü", "end"]);
  });
  // a long last line without a newline
  await withFile(
    `a\n${"z".repeat(5 * MiB)}`,
    async (p) => assert.deepEqual(await lines(p, 10), ["a", "z".repeat(10)]),
  );
});

Deno.test("readHead gives the first bytes and the size, and refuses what is not a plain file", async () => {
  await withFile("0123456789", async (p) => {
    const { bytes, size } = await readHead(p, 4);
    assert.deepEqual([new TextDecoder().decode(bytes), size], ["0123", 10]);
    const all = await readHead(p, 100);
    assert.deepEqual([all.bytes.length, all.size], [10, 10]);
    const link = p + ".link";
    await Deno.symlink(p, link);
    await assert.rejects(readHead(link, 4), IrregularFile);
    await assert.rejects(Array.fromAsync(fileLines(link, 4)), IrregularFile);
  });
  const dir = await Deno.makeTempDir({ prefix: "tool-file-" });
  try {
    const fifo = join(dir, "fifo");
    await new Deno.Command("mkfifo", { args: [fifo] }).output();
    // opened without waiting on a writer, and refused
    await assert.rejects(readHead(fifo, 4), IrregularFile);
    await assert.rejects(Array.fromAsync(fileLines(fifo, 4)), IrregularFile);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
