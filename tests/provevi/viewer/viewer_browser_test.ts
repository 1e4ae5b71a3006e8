import assert from "node:assert/strict";
import { join } from "node:path";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { serveViewer } from "../../../lib/provevi/viewer/viewer_server.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { tour } from "../../../cli/tour.ts";
import { launch, openPage, screenshot } from "./_browser.ts";
import { writeRichRun } from "../_rich_run.ts";
import { peerTest } from "../../_peers.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const FIXTURES = join(ROOT, "fixtures");
const RUN = "run-20261129T120000Z-0badc0de";
const BODIES = "version: 1\ndestinations:\n  browser:\n    kind: live\n    receives: bodies\n";
const browserTest = (name: string, fn: () => Promise<void>) =>
  peerTest("chromium", { name, sanitizeOps: false, sanitizeResources: false, fn });
const quiet = { out: () => {}, err: () => {}, terminal: false, progress: () => {} };

/**
 * Follows a run's link in the runs list. The list redraws its rows every two seconds, and a click through a handle
 * found before a redraw fails with "Node is detached": the link is read and followed in one step in the page.
 */
async function openRunLink(page: import("puppeteer-core").Page, runId: string | undefined): Promise<void> {
  await Promise.all([
    page.waitForNavigation(),
    page.$eval(`tr[data-run="${runId}"] a`, (a) => (a as unknown as { click(): void }).click()),
  ]);
}

/** Starts `prove ui` as the `prove` task does (its own permission flags); gives its URL and a stop function. */
async function proveUi(args: string[]): Promise<{ url: string; stop: () => Promise<number> }> {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const words = (config.tasks.prove as string).split(" ").slice(1);
  const child = new Deno.Command(Deno.execPath(), {
    args: [...words.slice(0, -1), join(ROOT, words.at(-1)!), ...args],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { PROVRUN_TELEMETRY_POLICY: "" },
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/open (http:\S+)/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`prove ui ended: ${seen} ${await new Response(child.stderr).text()}`);
    seen += value;
  }
  const url = /open (http:\S+)/.exec(seen)![1]!;
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      reader.cancel().catch(() => {});
      await child.stderr.cancel().catch(() => {});
      return (await child.status).code;
    },
  };
}

browserTest(
  "prove ui on the tour's store shows the tour's run in Chromium: its spans, events and verdict",
  async () => {
    const home = await Deno.makeTempDir();
    const runs = join(home, "runs");
    try {
      assert.equal(await tour(quiet, { runs }), 0);
      const [runId] = [...Deno.readDirSync(runs)].map((e) => e.name).filter((n) => !n.startsWith("."));
      const policy = join(home, "policy.yaml");
      await Deno.writeTextFile(policy, BODIES);
      const ui = await proveUi([
        "--runs",
        runs,
        "ui",
        "--port",
        "0",
        "--policy",
        policy,
        "--config",
        join(home, "tour", "provcat.yaml"),
      ]);
      try {
        await using browser = await launch();
        const { page, errors } = await openPage(browser);
        await page.goto(ui.url, { waitUntil: "networkidle0" });
        assert.equal(new URL(page.url()).search, "", "the token is in the path, not the query");
        // The runs page redraws its rows every two seconds: read them by selector, never through a held handle.
        await page.waitForSelector(`tr[data-run="${runId}"]`);
        assert.equal(await page.$eval(`tr[data-run="${runId}"] .pill`, (e) => e.textContent), "completed");
        await screenshot(page, "tour-runs", { docs: false });
        await openRunLink(page, runId);
        await page.waitForSelector("#verdict.ok");
        const spans = await page.$$eval(
          ".span",
          (els) => els.map((e) => e.querySelector(".name")!.textContent),
        );
        assert.ok(spans.length >= 4, `spans: ${spans}`);
        assert.ok(
          spans.some((s) => s!.includes("chat")),
          `a chat span: ${spans}`,
        );
        const types = await page.$$eval(
          "tr[data-type]",
          (els) => els.map((e) => e.getAttribute("data-type")),
        );
        assert.equal(types[0], "run_created");
        assert.equal(types.at(-1), "run_completed");
        assert.ok(types.includes("model_called") && types.includes("input_staged"));
        const text = await page.$eval("main", (m) => m.textContent!);
        assert.match(text, /Evidence verified/);
        assert.match(text, /committed bundle run:\/\/acme\/demo\/dev\//);
        assert.match(text, /Revenue grew 12% in Q3, from 43.0 to 48.2 million USD./);
        assert.match(text, /data:\/\/acme\/demo\/dev\/finance\/revenue.csv\?at=commit:/);
        await screenshot(page, "tour-run", { docs: false });
        assert.deepEqual(errors, []);
      } finally {
        assert.equal(await ui.stop(), 0);
      }
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
);

browserTest(
  "a tampered run shows its problem prominently, and its content only when asked, marked unverified",
  async () => {
    await using viewer = await serveViewer(new FileStore({ runs: join(FIXTURES, "runs-tampered") }), {
      policy: TelemetryPolicy.parse(BODIES),
      port: 0,
    });
    await using browser = await launch();
    const { page, errors } = await openPage(browser);
    await page.goto(new URL(`runs/${RUN}`, viewer.url).href, { waitUntil: "networkidle0" });
    await page.waitForSelector("#verdict.bad");
    const problems = await page.$$eval("#problems li", (els) => els.map((e) => e.textContent));
    assert.ok(problems.some((p) => /line 10 \(seq 9\) has prev/.test(p!)), String(problems));
    const main = await page.$eval("main", (m) => m.textContent!);
    assert.doesNotMatch(main, /Revenue grew 12%/);
    assert.match(main, /structure only/);
    await screenshot(page, "tampered");
    await page.click("#verdict button");
    await page.waitForSelector(".untrusted");
    assert.match(await page.$eval("main", (m) => m.textContent!), /UNVERIFIED CONTENT/);
    assert.deepEqual(errors, []);
  },
);

browserTest(
  "a run started while the page is open appears, streams its text, and is then shown from its replay",
  async () => {
    const home = await Deno.makeTempDir();
    const store = new SqliteStore(join(home, "evidence.db"), { runs: join(home, "runs") });
    try {
      const policy = TelemetryPolicy.parse(BODIES);
      await using viewer = await serveViewer(store, {
        policy,
        port: 0,
        openToWrite: () =>
          Promise.resolve(new SqliteStore(join(home, "evidence.db"), { runs: join(home, "runs") })),
      });
      await using browser = await launch();
      const { page, errors } = await openPage(browser);
      await page.goto(viewer.url, { waitUntil: "networkidle0" });
      await page.waitForSelector("#runs");
      const answer =
        "Revenue grew 12% in Q3, from 43.0 to 48.2 million USD, led by the north region and steady renewals across the year.";
      const run = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: revenue-question
  backend: call
  stream: true
  model: "test:"
  instructions: Answer in one sentence, with the numbers you used.
  script:
    model: answer-1
    turns:
      - text: "${answer}"
        usage: { input: 62, output: 24 }
        delay_ms: 2500
        piece_ms: 150
prompt: What was the revenue growth in Q3?
`);
      const running = runFile(run, { store, policy, environ: {} });
      await page.waitForSelector("tr[data-run] .pill.running", { timeout: 20000 });
      const runId = await page.$eval(
        "tr[data-run] .pill.running",
        (e) => e.closest("tr")!.getAttribute("data-run"),
      );
      const cdp = await page.createCDPSession();
      await cdp.send("Network.enable");
      const texts: string[] = [];
      cdp.on("Network.eventSourceMessageReceived", (m) => {
        if (m.eventName === "text") texts.push(JSON.parse(m.data).text);
      });
      await openRunLink(page, runId);
      await page.waitForSelector("#verdict.live");
      await page.waitForSelector("#streaming", { timeout: 20000 });
      await page.waitForFunction('(document.getElementById("streaming")?.textContent ?? "").length > 40');
      await screenshot(page, "live");
      const outcome = await running;
      assert.equal(outcome.status, "completed");
      await page.waitForSelector("#verdict.ok", { timeout: 20000 });
      assert.ok(texts.length > 5, `the page received the answer in pieces (${texts.length})`);
      assert.equal(texts.join(""), answer);
      assert.match(await page.$eval("main", (m) => m.textContent!), new RegExp(answer.slice(0, 30)));
      // A second run, to compare, and an assessment added from the page.
      const other = RunFile.parse(
        run.text.replace("answer-1", "answer-2").replace(answer, "Revenue grew 11%.").replace(
          /\s+delay_ms: 2500\n\s+piece_ms: 150/,
          "",
        ),
      );
      const second = await runFile(other, { store, policy, environ: {} });
      await page.type("input[name=name]", "correct");
      await page.type("input[name=value]", "true");
      await page.type("input[name=rationale]", "matches the ledger");
      await page.click("form button[type=submit]");
      await page.waitForFunction('document.querySelector("main").textContent.includes("matches the ledger")');
      assert.equal((await store.assessments(outcome.runId)).length, 1);
      await page.goto(new URL(`compare?a=${outcome.runId}&b=${second.runId}`, viewer.url).href, {
        waitUntil: "networkidle0",
      });
      await page.waitForSelector("#compare");
      assert.match(await page.$eval("#compare", (c) => c.textContent!), /Revenue grew 11%\./);
      await screenshot(page, "compare-live", { docs: false });
      await page.goto(new URL("agents", viewer.url).href, { waitUntil: "networkidle0" });
      await page.waitForFunction('document.querySelector("main").textContent.includes("versions")');
      await screenshot(page, "agents");
      assert.deepEqual(errors, []);
    } finally {
      await store.close();
      await Deno.remove(home, { recursive: true });
    }
  },
);

browserTest(
  "in the browser, the viewer refuses a page without the token, and a write from another origin",
  async () => {
    const home = await Deno.makeTempDir();
    const store = new SqliteStore(join(home, "evidence.db"), { runs: join(home, "runs") });
    const other = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () =>
        new Response("<!doctype html><title>elsewhere</title>", { headers: { "content-type": "text/html" } }),
    );
    try {
      const policy = TelemetryPolicy.parse(BODIES);
      const outcome = await runFile(
        RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent: { name: q, backend: call, model: "test:", script: { turns: [{ text: "ok" }] } }
prompt: hi
`),
        { store, policy, environ: {} },
      );
      await using viewer = await serveViewer(store, {
        policy,
        port: 0,
        openToWrite: () =>
          Promise.resolve(new SqliteStore(join(home, "evidence.db"), { runs: join(home, "runs") })),
      });
      await using browser = await launch();
      const { page } = await openPage(browser);
      const bare = await page.goto(`http://127.0.0.1:${viewer.port}/`);
      assert.equal(bare!.status(), 403);
      assert.match(
        await page.$eval("body", (b) => b.textContent!),
        /needs the token/,
      );
      // A page of another origin in the same browser, that even knows the viewer's address, tries to write.
      await page.goto(viewer.url, { waitUntil: "networkidle0" });
      const elsewhere = await browser.newPage();
      await elsewhere.goto(`http://127.0.0.1:${other.addr.port}/`);
      const status = await elsewhere.evaluate(async (target: string) => {
        try {
          const r = await fetch(target, {
            method: "POST",
            credentials: "include",
            headers: { "content-type": "text/plain" },
            body: JSON.stringify({ name: "forged", value: true }),
          });
          return r.status;
        } catch (error) {
          return String(error);
        }
      }, `${viewer.url}api/runs/${outcome.runId}/assessments`);
      assert.notEqual(status, 201);
      assert.deepEqual(await store.assessments(outcome.runId), []);
    } finally {
      await other.shutdown();
      await store.close();
      await Deno.remove(home, { recursive: true });
    }
  },
);

browserTest(
  "a run's span links to its trace's page, where every span of the trace is nested with its run; a file store's run takes an assessment",
  async () => {
    const home = await Deno.makeTempDir();
    const runs = join(home, "runs");
    try {
      const policy = TelemetryPolicy.parse(BODIES);
      const outcome = await runFile(
        RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent: { name: q, backend: call, model: "test:", script: { model: m, turns: [{ text: "ok" }] } }
prompt: hi
`),
        { store: new FileStore({ runs }), policy, environ: {} },
      );
      await using viewer = await serveViewer(new FileStore({ runs }), {
        policy,
        port: 0,
        openToWrite: () => Promise.resolve(new FileStore({ runs })),
      });
      await using browser = await launch();
      const { page, errors } = await openPage(browser);
      await page.goto(new URL(`runs/${outcome.runId}`, viewer.url).href, { waitUntil: "networkidle0" });
      await page.waitForSelector("#verdict");
      const target = await page.$$eval(
        ".span",
        (els) =>
          els.map((e) => [e.getAttribute("data-span"), e.querySelector(".name")!.textContent!.trim()])
            .find(([, name]) => name.includes("chat"))![0]!,
      );
      // A span picked in the trace names its trace in the detail panel, a link to the trace's page.
      await page.click(`.span[data-span="${target}"]`);
      await page.waitForSelector(`[data-detail-span="${target}"] a.to-trace`);
      await page.click(`[data-detail-span="${target}"] a.to-trace`);
      await page.waitForSelector(".span.marked");
      assert.match(new URL(page.url()).pathname, /\/traces\/[0-9a-f]{32}$/);
      assert.equal(await page.$eval(".span.marked", (e) => e.getAttribute("data-span")), target);
      const names = await page.$$eval(".span .name", (els) => els.map((e) => e.textContent!.trim()));
      assert.ok(names.length >= 4 && names.some((n) => n.includes("chat")), String(names));
      assert.match(await page.$eval("main", (m) => m.textContent!), new RegExp(`in ${outcome.runId}`));
      await screenshot(page, "trace");
      // Back on the run's page (its link on the trace's page), an assessment of the file store's run.
      await page.click(`main .sub a`);
      await page.waitForSelector("#verdict.ok");
      await page.type("input[name=name]", "correct");
      await page.type("input[name=value]", "true");
      await page.click("form button[type=submit]");
      await page.waitForFunction('document.querySelector("main").textContent.includes("correct")');
      const written = await Deno.readTextFile(join(runs, outcome.runId, "assessments.jsonl"));
      assert.match(written, /"name":"correct"/);
      assert.deepEqual(errors, []);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
);

browserTest(
  "the experiments page lists an experiment's assessments and adds one, of the experiment or one of its versions",
  async () => {
    const home = await Deno.makeTempDir();
    const db = join(home, "evidence.db");
    const EXP = "experiment://acme/risk/dev/credit/q";
    const PIN = `${EXP}?at=commit:${"1".repeat(40)}`;
    const store = new SqliteStore(db, { runs: join(home, "runs") });
    try {
      await writeRichRun(await store.openRun("run-1"), { experiment: EXP, experimentPin: PIN });
      await store.assess({ experiment: EXP }, "approved", true, { source: "ada" });
      await using viewer = await serveViewer(store, {
        policy: TelemetryPolicy.parse(BODIES),
        port: 0,
        openToWrite: () => Promise.resolve(new SqliteStore(db, { runs: join(home, "runs") })),
      });
      await using browser = await launch();
      const { page, errors } = await openPage(browser);
      await page.goto(new URL("experiments", viewer.url).href, { waitUntil: "networkidle0" });
      await page.waitForSelector("#experiment-assessments tr[data-assessment]");
      assert.match(
        await page.$eval("#experiment-assessments", (e) => e.textContent!),
        /approved.*true.*the experiment.*ada/,
      );
      await page.select("#experiment-assessments select[name=target]", PIN);
      await page.type("#experiment-assessments input[name=name]", "score");
      await page.type("#experiment-assessments input[name=value]", "0.7");
      await page.click("#experiment-assessments button[type=submit]");
      await page.waitForFunction(
        'document.querySelectorAll("#experiment-assessments tr[data-assessment]").length === 2',
      );
      const added = await store.experimentAssessments(PIN);
      assert.deepEqual(added.map((a) => [a.name, a.value, a.experiment]), [["approved", true, EXP], [
        "score",
        0.7,
        PIN,
      ]]);
      await screenshot(page, "experiments");
      assert.deepEqual(errors, []);
    } finally {
      await store.close();
      await Deno.remove(home, { recursive: true });
    }
  },
);
