/**
 * The viewer's script: the committed bundle is the bundle of the committed TypeScript in `app/`, the script
 * makes the page only through its one builder (no HTML from strings, no code from strings), and the routes
 * table checks every `:name` part it has.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bundleScript } from "../../../lib/provevi/viewer/_bundle_script.ts";
import { APP_JS } from "../../../lib/provevi/viewer/viewer_script.ts";
import { API_ROUTES, PARAM_CHECKS } from "../../../lib/provevi/viewer/viewer_routes.ts";
import { PAGES } from "../../../lib/provevi/viewer/viewer_paths.ts";
import { escapeHtml, html, raw } from "../../../lib/provevi/viewer/viewer_html.ts";
import { pageHtml } from "../../../lib/provevi/viewer/viewer_assets.ts";

const APP = new URL("../../../lib/provevi/viewer/app/", import.meta.url).pathname;

Deno.test("the committed viewer script is the bundle of app/ as committed (deno task viewer:bundle)", async () => {
  assert.ok(APP_JS === await bundleScript(), "viewer_script.ts is stale: run deno task viewer:bundle");
});

Deno.test("the script puts no string into the page as HTML, and runs no string as code", async () => {
  const found: string[] = [];
  for await (const entry of Deno.readDir(APP)) {
    const text = await Deno.readTextFile(join(APP, entry.name));
    for (
      const bad of [
        /\.innerHTML\b/,
        /\.outerHTML\b/,
        /insertAdjacentHTML/,
        /document\.write/,
        /\beval\(/,
        /new Function\(/,
        /\bDeno\./,
        /setAttribute\(\s*["']on/,
      ]
    ) {
      if (bad.test(text)) found.push(`${entry.name}: ${bad}`);
    }
  }
  assert.deepEqual(found, []);
  for (const bad of ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("]) {
    assert.ok(!APP_JS.includes(bad), bad);
  }
});

Deno.test("every :name part of a route is checked, and no page shadows an API route", () => {
  const names = [...new Set(API_ROUTES.flatMap((r) => r.path.split("/").filter((p) => p.startsWith(":"))))];
  assert.deepEqual(names.filter((n) => !(n.slice(1) in PARAM_CHECKS)), []);
  for (const page of PAGES) {
    assert.ok(!page.startsWith("api/") && !page.startsWith("assets/"), page);
  }
  const keys = API_ROUTES.map((r) => `${r.method} ${r.path}`);
  assert.equal(new Set(keys).size, keys.length);
});

Deno.test("the server's HTML goes through one escaping helper", () => {
  assert.equal(escapeHtml(`<a href="x" title='y'>&`), "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;");
  assert.equal(
    html`<p title="${'"><script>'}">${"<b>"}${raw("<i>")}</p>`.text,
    '<p title="&quot;&gt;&lt;script&gt;">&lt;b&gt;<i></p>',
  );
  const page = pageHtml('/t/"><script>alert(1)</script>/');
  assert.ok(!page.includes("<script>alert"), page);
  assert.match(page, /<meta name="referrer" content="no-referrer">/);
});
