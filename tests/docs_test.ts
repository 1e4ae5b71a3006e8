import assert from "node:assert/strict";
import { bufferIo } from "../cli/_io.ts";
import { prove } from "../cli/prove.ts";
import { provr } from "../cli/provr.ts";

const DOCS = new URL("../docs/", import.meta.url);

async function commandsOf(command: typeof prove, args: string[]): Promise<string[]> {
  const io = bufferIo();
  await command([...args, "--help"], io);
  const help = io.stdout.join("\n");
  const section = help.slice(help.indexOf("Commands:"));
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((c) => c !== "help");
}

Deno.test("every prove command is documented in docs/prove.md or a guide it links", async () => {
  const docs = await Deno.readTextFile(new URL("prove.md", DOCS));
  const more = await Deno.readTextFile(new URL("telemetry.md", DOCS)) +
    await Deno.readTextFile(new URL("sqlite.md", DOCS));
  const missing = (await commandsOf(prove, [])).filter((c) =>
    !docs.includes(`prove ${c}`) && !more.includes(`prove ${c}`)
  );
  assert.deepEqual(missing, []);
});

Deno.test("every provr command is documented in docs/provr.md, and each catalog command in docs/catalog.md", async () => {
  const docs = await Deno.readTextFile(new URL("provr.md", DOCS));
  assert.deepEqual((await commandsOf(provr, [])).filter((c) => !docs.includes(`provr ${c}`)), []);
  const catalog = await Deno.readTextFile(new URL("catalog.md", DOCS));
  const subs = await commandsOf(provr, ["catalog"]);
  assert.ok(subs.length >= 5, subs.join(","));
  assert.deepEqual(subs.filter((c) => !catalog.includes(`provr catalog ${c}`)), []);
});

Deno.test("every guide the README links exists, and every guide is linked from the README", async () => {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const linked = [...readme.matchAll(/\]\(docs\/([a-z-]+\.md)\)/g)].map((m) => m[1]!);
  const guides: string[] = [];
  for await (const e of Deno.readDir(DOCS)) if (e.name.endsWith(".md")) guides.push(e.name);
  assert.deepEqual(linked.filter((l) => !guides.includes(l)), []);
  assert.deepEqual(guides.filter((g) => !linked.includes(g)).sort(), []);
});
