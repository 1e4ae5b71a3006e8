/**
 * A tool's zod schema becomes its definition's JSON schema through the schema's own `toJSONSchema`, so the
 * tools worker loads no zod of its own: the same JSON schema as `z.toJSONSchema` (input side, without
 * `$schema`), and a schema that validates like zod's but gives no JSON schema is refused, naming the tool.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { loadTools } from "../../../lib/provrun/sandbox/sandbox_worker.ts";

const tool = (schema: unknown) => ({ name: "rate", description: "A rate.", schema, execute: () => 1 });

Deno.test("a tool's zod schema gives the JSON schema z.toJSONSchema gives for its input, without $schema", () => {
  const schemas = [
    z.object({ path: z.string().describe("where"), n: z.number().int().min(1).optional() }),
    z.object({ tags: z.array(z.enum(["a", "b"])).default([]), size: z.string().transform((s) => s.length) }),
    z.object({
      at: z.iso.datetime(),
      pair: z.tuple([z.string(), z.boolean()]),
      r: z.record(z.string(), z.number()),
    }),
  ];
  for (const schema of schemas) {
    const [loaded] = loadTools([{ url: "/tools/a.ts", mod: { TOOLS: [tool(schema)] } }], false);
    const { $schema: _, ...expected } = z.toJSONSchema(schema, { io: "input" });
    assert.deepEqual(loaded!.definition.input_schema, expected);
  }
});

Deno.test("a schema that validates like zod's but gives no JSON schema is refused as the module loads, naming the tool", () => {
  const lookalike = { "~standard": { version: 1 }, safeParse: (v: unknown) => ({ success: true, data: v }) };
  assert.throws(
    () => loadTools([{ url: "/tools/a.ts", mod: { TOOLS: [tool(lookalike)] } }], false),
    /^TypeError: \/tools\/a\.ts: tool "rate": its schema gives no JSON schema; use zod 4's/,
  );
});

Deno.test("the tools worker's own modules import no zod", async () => {
  const dir = new URL("../../../lib/provrun/sandbox/", import.meta.url);
  for (const name of ["_tools_worker.ts", "sandbox_worker.ts", "fs_tools.ts", "note_citations.ts"]) {
    const text = await Deno.readTextFile(new URL(name, dir));
    assert.doesNotMatch(text, /^import [^;]*from "zod(\/[^"]*)?";/m, name);
  }
});
