/**
 * A tool declares `idempotent: true` in its module's `TOOLS` (the five built-in tools do): the definition the
 * evidence records carries it; a tool that says nothing is not idempotent; any other value is refused as the
 * module loads, naming the tool.
 */
import assert from "node:assert/strict";
import { loadTools } from "../../../lib/provrun/sandbox/sandbox_worker.ts";

const tool = (extra: Record<string, unknown>) => ({
  name: "rate",
  description: "A rate.",
  schema: { type: "object", properties: {} },
  execute: () => 1,
  ...extra,
});

Deno.test("a tool's idempotent flag is in its definition; the built-in tools are idempotent", () => {
  const loaded = loadTools([
    { url: "/tools/a.ts", mod: { TOOLS: [tool({ idempotent: true }), tool({ name: "send" })] } },
  ], true);
  const byName = Object.fromEntries(loaded.map((t) => [t.definition.name, t.definition.idempotent ?? false]));
  assert.deepEqual(byName, {
    read_file: true,
    list_files: true,
    grep_file: true,
    write_file: true,
    note: true,
    rate: true,
    send: false,
  });
  assert.ok(!("idempotent" in loaded.find((t) => t.definition.name === "send")!.definition));
});

Deno.test("an idempotent flag that is not true or false is refused as the module loads, naming the tool", () => {
  assert.throws(
    () => loadTools([{ url: "/tools/a.ts", mod: { TOOLS: [tool({ idempotent: "yes" })] } }], false),
    /\/tools\/a\.ts: tool "rate": idempotent is true or false/,
  );
});
