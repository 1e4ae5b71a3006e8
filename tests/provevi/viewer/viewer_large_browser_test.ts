/**
 * In Chromium: a large run's page stays bounded and loads the rest on demand, and the viewer's token reaches
 * no other port of 127.0.0.1 (no cookie, no referrer).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { serveViewer } from "../../../lib/provevi/viewer/viewer_server.ts";
import { launch, openPage } from "./_browser.ts";
import { writeRun } from "./_runs.ts";
import { peerTest } from "../../_peers.ts";

const BODIES = TelemetryPolicy.parse(
  "version: 1\ndestinations:\n  browser:\n    kind: live\n    receives: bodies\n",
);
const browserTest = (name: string, fn: () => Promise<void>) =>
  peerTest("chromium", { name, sanitizeOps: false, sanitizeResources: false, fn });

browserTest(
  "a run of 450 steps and a 3 MB answer: its page shows 200 events and loads more on demand, and links to the whole answer",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "viewer-large-" });
    try {
      const runs = join(dir, "runs");
      const runId = await writeRun(runs, { answers: [3_000_000], tools: 450 });
      await using viewer = await serveViewer(new FileStore({ runs }), { policy: BODIES, port: 0 });
      await using browser = await launch();
      const { page, errors } = await openPage(browser);
      await page.goto(new URL(`runs/${runId}`, viewer.url).href, { waitUntil: "networkidle0" });
      await page.waitForSelector("#verdict.ok");
      const rows = () => page.$$eval("tr[data-type]", (els) => els.length);
      assert.equal(await rows(), 200);
      assert.equal(await page.$$eval(".span", (els) => els.length), 300);
      assert.match(await page.$eval("#more-events", (e) => e.textContent!), /200 of 453 events/);
      const answer = await page.$eval(".answer", (e) => e.textContent!);
      assert.match(answer, /cut to fit the page/);
      assert.ok(answer.length < 17_000, String(answer.length));
      const whole = await page.$eval(".answer a.whole", (a) => a.getAttribute("href")!);
      const length = await page.evaluate(
        async (url: string) => (await (await fetch(url)).text()).length,
        whole,
      );
      assert.equal(length, 3_000_000 + "Answer 1: ".length);
      await page.click("#more-events button");
      await page.waitForFunction('document.querySelectorAll("tr[data-type]").length === 400');
      await page.click("#more-events button");
      await page.waitForFunction('document.querySelectorAll("tr[data-type]").length === 453');
      assert.equal(await page.$("#more-events"), null);
      await page.click("#timeline .pager button");
      await page.waitForFunction('document.querySelectorAll(".span").length === 452');
      assert.deepEqual(errors, []);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

browserTest(
  "the token reaches no other port of 127.0.0.1: the viewer sets no cookie, and a page it leaves gets no referrer",
  async () => {
    const seen: { url: string; cookie: string | null; referer: string | null }[] = [];
    const other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
      seen.push({
        url: request.url,
        cookie: request.headers.get("cookie"),
        referer: request.headers.get("referer"),
      });
      return new Response("<!doctype html><title>another program</title>", {
        headers: { "content-type": "text/html" },
      });
    });
    try {
      await using viewer = await serveViewer(
        new FileStore({ runs: new URL("../../../fixtures/runs", import.meta.url).pathname }),
        {
          policy: BODIES,
          port: 0,
        },
      );
      await using browser = await launch();
      const { page } = await openPage(browser);
      await page.goto(viewer.url, { waitUntil: "networkidle0" });
      await page.waitForSelector("tr[data-run]");
      const cdp = await page.createCDPSession();
      const { cookies } = await cdp.send("Network.getAllCookies");
      assert.deepEqual(cookies, []);
      // The user follows a link from the viewer to another program's page on another port.
      await page.evaluate(`(() => {
        const a = document.createElement("a");
        a.href = "http://127.0.0.1:${other.addr.port}/landing";
        document.body.append(a);
        a.click();
      })()`);
      await page.waitForFunction('document.title === "another program"');
      const landing = seen.find((s) => s.url.endsWith("/landing"))!;
      assert.equal(landing.cookie, null);
      assert.equal(landing.referer, null);
      assert.ok(seen.every((s) => !`${s.url} ${s.cookie} ${s.referer}`.includes(viewer.token)));
    } finally {
      await other.shutdown();
    }
  },
);
