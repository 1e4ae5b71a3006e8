import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { isCommonJs } from "../../../lib/provrun/sandbox/_tools_hooks.ts";
import { PACKAGE_TYPES } from "../../../lib/provrun/sandbox/_package_types.ts";
import {
  lockedPackages,
  packageTypes,
  packageTypesModule,
} from "../../../lib/provrun/sandbox/_package_types_build.ts";

const ROOT = new URL("../../../", import.meta.url);

Deno.test("the sandbox's table of module types has every package of deno.lock, as the cache has them (deno task sandbox:packages)", async () => {
  const lock = JSON.parse(await Deno.readTextFile(new URL("deno.lock", ROOT)));
  assert.deepEqual(Object.keys(PACKAGE_TYPES).sort(), lockedPackages(lock));
  const zod = fileURLToPath(import.meta.resolve("zod"));
  const fresh = await packageTypes(
    fileURLToPath(new URL("deno.lock", ROOT)),
    zod.slice(0, zod.indexOf("/zod/")),
  );
  assert.deepEqual(JSON.parse(JSON.stringify(PACKAGE_TYPES)), fresh);
  assert.match(packageTypesModule(fresh), /PACKAGE_TYPES/);
});

Deno.test("a module of the pinned packages is CommonJS by its extension, else by its folder's package.json", () => {
  const cache = "file:///home/u/.cache/deno/npm/registry.npmjs.org/";
  assert.equal(isCommonJs(`${cache}yaml/2.9.1/dist/index.js`, cache), true);
  assert.equal(isCommonJs(`${cache}yaml/2.9.1/browser/index.js`, cache), false, "a folder of its own type");
  assert.equal(isCommonJs(`${cache}zod/4.6.7/index.js`, cache), false);
  assert.equal(isCommonJs(`${cache}zod/4.6.7/x.cjs`, cache), true);
  assert.equal(isCommonJs(`${cache}semver/7.8.6/x.mjs`, cache), false);
  assert.equal(isCommonJs(`${cache}@modelcontextprotocol/sdk/1.32.2/dist/cjs/client/index.js`, cache), true);
  assert.equal(isCommonJs(`${cache}@modelcontextprotocol/sdk/1.32.2/dist/esm/client/index.js`, cache), false);
  assert.equal(isCommonJs(`${cache}not-pinned/1.0.0/index.js`, cache), null);
  const modules = "file:///app/node_modules/";
  assert.equal(isCommonJs(`${modules}.deno/yaml@2.9.1/node_modules/yaml/dist/index.js`, modules), true);
  assert.equal(
    isCommonJs(
      `${modules}.deno/@modelcontextprotocol+sdk@1.32.2/node_modules/@modelcontextprotocol/sdk/dist/esm/a.js`,
      modules,
    ),
    false,
  );
});
