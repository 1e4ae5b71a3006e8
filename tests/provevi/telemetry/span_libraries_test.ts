import { deepEqual, equal, throws } from "node:assert/strict";
import {
  distributionOf,
  exportedModules,
  type InstalledPackages,
  installedPackages,
  pinnedImports,
  readInstalledPackages,
  spanLibraries,
} from "../../../lib/provevi/telemetry/span_libraries.ts";

const installed: InstalledPackages = new Map([
  ["ai", { name: "ai", version: "7.0.173", modules: ["", "internal", "test"] }],
  ["@ai-sdk/provider-utils", { name: "@ai-sdk/provider-utils", version: "5.0.81", modules: ["", "test"] }],
  ["lodash.merge", { name: "lodash.merge", version: "4.6.2", modules: null }],
]);

Deno.test("spanLibraries() counts a scope's own name only if a package of that name is installed", () => {
  deepEqual(spanLibraries("ai", { installed }), ["ai"]);
  deepEqual(spanLibraries("lodash.merge", { installed }), ["lodash.merge"]);
  deepEqual(spanLibraries("litellm", { installed }), []);
  deepEqual(spanLibraries("AI", { installed }), []);
  deepEqual(spanLibraries("", { installed }), []);
});

Deno.test("spanLibraries() counts a module path for the package that holds it", () => {
  deepEqual(spanLibraries("ai/test", { installed }), ["ai"]);
  deepEqual(spanLibraries("@ai-sdk/provider-utils/test", { installed }), ["@ai-sdk/provider-utils"]);
});

Deno.test("spanLibraries() places a made-up module nowhere", () => {
  deepEqual(spanLibraries("ai/evil", { installed }), []);
  deepEqual(spanLibraries("ai/../ai", { installed }), []);
  deepEqual(spanLibraries("ai/", { installed }), []);
  deepEqual(spanLibraries("@ai-sdk/provider-utils/evil", { installed }), []);
  deepEqual(spanLibraries("@ai-sdk", { installed }), []);
  deepEqual(spanLibraries("lodash.merge/sub", { installed }), [], "modules unknown: never guessed");
  deepEqual(spanLibraries("ai.evil", { installed }), []);
});

Deno.test("spanLibraries() counts no name when the installed packages cannot be read", () => {
  deepEqual(spanLibraries("ai", { installed: null }), []);
  throws(() => spanLibraries(3 as unknown as string, { installed }), TypeError);
});

Deno.test("pinnedImports() reads the npm packages that deno.json pins", () => {
  deepEqual(
    pinnedImports({
      imports: {
        ai: "npm:ai@7.0.173",
        "ai/": "npm:/ai@7.0.173/",
        "@ai-sdk/openai": "npm:@ai-sdk/openai@4.0.118",
        alias: "npm:zod@4.6.7",
        local: "./x.ts",
        jsr: "jsr:@std/yaml@1",
      },
    }),
    new Map([["ai", "7.0.173"], ["@ai-sdk/openai", "4.0.118"], ["zod", "4.6.7"]]),
  );
  deepEqual(pinnedImports(null), new Map());
  deepEqual(pinnedImports({ imports: 3 }), new Map());
});

Deno.test("exportedModules() reads the module paths of a package's exports, without patterns", () => {
  deepEqual(
    exportedModules({
      exports: { ".": "./i.js", "./test": "./t.js", "./*": "./*.js", "./package.json": "./package.json" },
    }),
    ["", "test"],
  );
  deepEqual(exportedModules({ exports: "./i.js" }), [""]);
  deepEqual(exportedModules({ exports: { import: "./i.mjs", require: "./i.cjs" } }), [""]);
  equal(exportedModules({ main: "i.js" }), null);
});

Deno.test("readInstalledPackages() reads the project's deno.json and the npm cache", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cache = `${dir}/cache`;
    await Deno.mkdir(`${cache}/ai/7.0.173`, { recursive: true });
    await Deno.writeTextFile(
      `${cache}/ai/7.0.173/package.json`,
      JSON.stringify({ exports: { ".": "./i.js", "./test": "./t.js" } }),
    );
    await Deno.writeTextFile(
      `${dir}/deno.json`,
      JSON.stringify({ imports: { ai: "npm:ai@7.0.173", zod: "npm:zod@^4" } }),
    );
    const found = await readInstalledPackages({ config: `${dir}/deno.json`, npmCache: cache });
    deepEqual(found?.get("ai"), { name: "ai", version: "7.0.173", modules: ["", "test"] });
    deepEqual(found?.get("zod"), { name: "zod", version: "^4", modules: null });
    equal(await readInstalledPackages({ config: `${dir}/missing.json` }), null);
    deepEqual(spanLibraries("ai/test", { installed: found! }), ["ai"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("installedPackages() reads the project's packages once", async () => {
  const first = installedPackages();
  equal(installedPackages(), first);
  equal((await first)?.get("ai")?.version, "7.0.173");
});

Deno.test("distributionOf() guesses a package for a report", () => {
  equal(distributionOf("npm:@ai-sdk/openai@4.0.118/dist/index.mjs"), "@ai-sdk/openai");
  equal(distributionOf("npm:/ai@7.0.173/test"), "ai");
  equal(distributionOf("file:///p/node_modules/.deno/ai@7.0.173/node_modules/ai/dist/index.mjs"), "ai");
  equal(
    distributionOf("/root/.cache/deno/npm/registry.npmjs.org/@opentelemetry/api/1.9.0/build/src/index.js"),
    "@opentelemetry/api",
  );
  equal(distributionOf("@ai-sdk/provider-utils/test"), "@ai-sdk/provider-utils");
  equal(distributionOf("ai/test"), "ai");
  equal(distributionOf("node:http"), "node");
  equal(distributionOf("C:\\p\\node_modules\\zod\\index.js"), "zod");
});
