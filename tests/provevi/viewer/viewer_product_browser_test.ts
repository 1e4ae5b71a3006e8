/**
 * The viewer as a person uses it (issue #29), in Chromium at 1,280 px: each run's verdict in the runs list, a
 * failed run's reason beside its evidence's verdict, a run that cannot be checked here, the detail panel, a model
 * call's messages, a Claude Code run, what each level hides, search, and two agent versions compared. Each test
 * saves its screenshots (`.tools/screenshots/`, and docs/images/ with PROVE_UPDATE_SCREENSHOTS=1).
 * @module
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { serveViewer } from "../../../lib/provevi/viewer/viewer_server.ts";
import { tour } from "../../../cli/tour.ts";
import { launch, openPage, overflow, screenshot } from "./_browser.ts";
import { peerTest } from "../../_peers.ts";
import {
  agentRunFile,
  agentV2RunFile,
  claudeRun,
  demoCatalog,
  demoRun,
  failingRunFile,
  tamperedRun,
} from "./_demo_runs.ts";

/** A real Claude Code, when its peer is set (PROVRUN_TEST_CLAUDE). */
const CLAUDE: string | null = Deno.env.get("PROVRUN_TEST_CLAUDE") || null;

const quiet = { out: () => {}, err: () => {}, terminal: false, progress: () => {} };
const browserTest = (name: string, fn: () => Promise<void>) =>
  peerTest("chromium", { name, sanitizeOps: false, sanitizeResources: false, fn });
const policy = (level: string | null) =>
  level === null ? TelemetryPolicy.denyAll() : TelemetryPolicy.parse(
    `version: 1\ndestinations:\n  browser:\n    kind: live\n    receives: ${level}\n`,
  );

/** The demo's runs, made once for the file's tests (not at all without a browser). */
let made: ReturnType<typeof makeDemo> | null = null;
function demo() {
  return made ??= makeDemo();
}
async function makeDemo() {
  const t = await demoCatalog();
  await tour(quiet, { runs: t.runs });
  const tourRun = [...Deno.readDirSync(t.runs)].map((e) => e.name).find((n) => !n.startsWith("."))!;
  const ids = {
    tour: tourRun,
    tampered: await tamperedRun(t.runs),
    failed: await demoRun(t, failingRunFile()),
    agent: await demoRun(t, agentRunFile()),
    agent2: await demoRun(t, agentV2RunFile()),
  };
  return { t, ids };
}

/** Serves the demo at a level and opens a page in Chromium; gives the page and how to reach the viewer. */
async function open(level: string | null = "bodies") {
  const { t, ids } = await demo();
  const viewer = await serveViewer(new FileStore({ runs: t.runs }), { policy: policy(level), port: 0 });
  const browser = await launch();
  const { page, errors } = await openPage(browser);
  const go = async (path: string) => {
    await page.goto(new URL(path, viewer.url).href, { waitUntil: "networkidle0" });
  };
  return {
    page,
    errors,
    ids,
    go,
    async [Symbol.asyncDispose]() {
      await browser[Symbol.asyncDispose]();
      await viewer.shutdown();
    },
  };
}

const text = (page: Page, selector: string) => page.$eval(selector, (e) => e.textContent ?? "");

/** Waits until every row of the runs page has its verdict. */
async function verdicts(page: Page): Promise<Record<string, string>> {
  await page.waitForFunction(
    `document.querySelectorAll("#runs tr[data-run]").length > 0 &&
      !document.querySelector('#runs [data-verdict="pending"]')`,
    { timeout: 60_000 },
  );
  return Object.fromEntries(
    await page.$$eval(
      "#runs tr[data-run]",
      (rows) =>
        rows.map((
          r,
        ) => [r.getAttribute("data-run"), r.querySelector("[data-verdict]")?.getAttribute("data-verdict")]),
    ),
  );
}

browserTest(
  "the runs page shows each run's verdict beside its status, in a table that fits 1,280 px",
  async () => {
    await using ui = await open();
    const { page, ids } = ui;
    await ui.go("");
    const shown = await verdicts(page);
    assert.equal(shown[ids.agent], "verified");
    assert.equal(shown[ids.failed], "verified", "a failed run's evidence verifies");
    assert.equal(shown[ids.tampered], "does_not_verify", "a tampered run is never just 'completed'");
    assert.equal(shown[ids.tour], "cannot_check", "no catalog here to compare its bundle with");
    assert.equal(await text(page, `tr[data-run="${ids.tampered}"] .pill`), "completed");
    assert.match(await text(page, `tr[data-run="${ids.agent}"]`), /4 · 3\s*1 ✕/);
    assert.equal(await overflow(page), 0, "the runs page scrolls sideways");
    await screenshot(page, "runs");
    assert.deepEqual(ui.errors, []);
  },
);

browserTest(
  "a failed run's page says that the run failed and why, beside the verdict of its evidence",
  async () => {
    await using ui = await open();
    const { page, ids } = ui;
    await ui.go(`runs/${ids.failed}`);
    await page.waitForSelector("#outcome.failed");
    assert.match(await text(page, "#outcome"), /Run failed.*AI_APICallError: the model is overloaded/s);
    assert.match(await text(page, "#verdict.ok"), /Evidence verified/);
    assert.ok(await page.$('#errors tr[data-error="step_failed"]'));
    assert.ok(await page.$('.span[data-status="error"]'), "the failed call's span is red");
    assert.equal(await overflow(page), 0);
    await screenshot(page, "failed");
    assert.deepEqual(ui.errors, []);
  },
);

browserTest(
  "a run the viewer cannot check says so, distinct from tampering, and shows its content",
  async () => {
    await using ui = await open();
    const { page, ids } = ui;
    await ui.go(`runs/${ids.tour}`);
    await page.waitForSelector("#verdict.unchecked");
    assert.match(await text(page, "#verdict"), /Cannot be checked here.*not tampering/s);
    assert.ok(await page.$('#problems li[data-code="catalog.missing"]'));
    assert.match(await text(page, "main"), /Revenue grew 12% in Q3/);
    assert.equal(await page.$(".untrusted"), null);
    assert.deepEqual(ui.errors, []);
  },
);

browserTest(
  "the detail panel beside the trace shows a span's and an event's timings, data, payload and chain",
  async () => {
    await using ui = await open();
    const { page, ids } = ui;
    await ui.go(`runs/${ids.agent}`);
    await page.waitForSelector("#errors");
    // It opens on what went wrong: the tool call that read a file that is not there.
    await page.waitForSelector("#detail [data-detail-seq] .tag.t-err");
    assert.match(await text(page, "#detail"), /NotFound/);
    await page.click('.span[data-status="error"]');
    await page.waitForSelector("#detail [data-detail-span]");
    assert.match(await text(page, "#detail"), /Span ID.*Took/s);
    await page.click('#events tr[data-type="model_called"]');
    await page.waitForSelector("#detail [data-detail-seq]");
    const detail = await text(page, "#detail");
    assert.match(detail, /Line\s*\d+ of events\.jsonl/);
    assert.match(detail, /prev/);
    assert.match(detail, /Payload.*SHA-256/s);
    assert.match(detail, /Tokens in \/ out\s*412 \/ 31/);
    assert.ok(
      await page.$('#events tr.sel[data-type="model_called"]'),
      "the event is marked where it is listed",
    );
    assert.equal(await overflow(page), 0);
    await screenshot(page, "run");
    assert.deepEqual(ui.errors, []);
  },
);

browserTest("a model call shows its conversation as messages, and the run its whole history", async () => {
  await using ui = await open();
  const { page, ids } = ui;
  await ui.go(`runs/${ids.agent}`);
  await page.waitForSelector('#calls tr[data-call="model"]');
  await page.click('#calls tr[data-call="model"]');
  await page.waitForSelector('#detail .msg[data-role="assistant"]');
  const roles = await page.$$eval("#detail .msg", (els) => els.map((e) => e.getAttribute("data-role")));
  assert.deepEqual(roles, ["system", "user", "assistant"]);
  assert.match(await text(page, "#detail .msg.reply"), /read_file/);
  await page.waitForSelector("#conversation .call.result.error");
  assert.match(await text(page, "#conversation .call.result.error"), /NotFound/);
  assert.match(await text(page, "#facts"), /Tokens in \/ out\s*2,199 \/ 145/);
  assert.deepEqual(ui.errors, []);
});

peerTest(["chromium", "claude-code"], {
  name:
    "a Claude Code run shows its model calls (recorded by the gateway) and tool calls, the refused call in red",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const claude = await claudeRun((await demo()).t, CLAUDE!);
    await using ui = await open();
    const { page } = ui;
    await ui.go(`runs/${claude}`);
    await page.waitForSelector("#facts");
    assert.match(
      await text(page, "#facts"),
      // Recorded as events (the model gateway's calls, the hooks' tool calls), not counted from spans.
      /Model calls\s*4Tool calls\s*3Tokens/,
    );
    assert.match(await text(page, "#facts"), /Tokens in \/ out\s*\d+ \/ \d+/);
    assert.ok(await page.$('#calls tr[data-status="refused"]'), "the read outside its grants, refused");
    const names = await page.$$eval(".span .name", (els) => els.map((e) => e.textContent ?? ""));
    assert.ok(names.some((n) => n.includes("invoke_agent claude-code")), names.join(" | "));
    // The model calls as the gateway recorded them, each a chat span, and the tool calls under the run.
    assert.ok(names.some((n) => n.includes("chat claude-sonnet-4-5")), names.join(" | "));
    assert.ok(names.some((n) => n.includes("execute_tool Read")), names.join(" | "));
    // and Claude Code's own spans, read from the requests it sent the run, in the same tree under its step
    assert.ok(names.some((n) => n.includes("claude_code.llm_request")), names.join(" | "));
    assert.ok(names.some((n) => n.includes("claude_code.interaction")), names.join(" | "));
    // the indent of a span's name is its depth in the tree
    const indents = await page.$$eval(
      ".span .name",
      (els) =>
        els.map((e) => [e.textContent ?? "", (e.querySelector(".tw")?.textContent ?? "").length] as const),
    );
    const indent = (part: string) => indents.find(([n]) => n.includes(part))?.[1] ?? -1;
    assert.ok(
      indent("claude_code.interaction") > indent("invoke_agent claude-code"),
      JSON.stringify(indents),
    );
    assert.ok(!names.some((n) => n.includes("hook_called")), "no span is named for a hook");
    await page.waitForSelector('#conversation .msg[data-role="assistant"]', { timeout: 30_000 });
    assert.match(await text(page, "#conversation"), /Revenue grew 12% in Q3\./);
    assert.equal(await overflow(page), 0);
    await screenshot(page, "claude-code");
    assert.deepEqual(ui.errors, []);
  },
});

browserTest(
  "each level shows what it allows and says what it hides: names at names, nothing at structure",
  async () => {
    {
      await using ui = await open("names");
      const { page, ids } = ui;
      await ui.go("");
      await verdicts(page);
      const row = await text(page, `tr[data-run="${ids.agent}"]`);
      assert.match(row, /revenue-analyst\s*acme\/finance\/dev/);
      assert.match(row, /hidden/, "tokens and cost are hidden at names, not absent");
      assert.match(row, /4 · 3/, "counts are structure");
    }
    {
      await using ui = await open(null);
      const { page, ids } = ui;
      await ui.go("");
      await verdicts(page);
      const cells = await page.$$eval(`tr[data-run="${ids.agent}"] .hidden-mark`, (els) => els.length);
      assert.ok(cells >= 4, "agent, model, tokens and cost say hidden");
      await ui.go(`runs/${ids.agent}`);
      await page.waitForSelector("#facts");
      assert.match(await text(page, "#facts"), /Agent\s*hidden/);
      assert.deepEqual(ui.errors, []);
    }
  },
);

browserTest("search finds runs by the words of their answers and by filters", async () => {
  await using ui = await open();
  const { page, ids } = ui;
  await ui.go("");
  await page.type('#search input[name="q"]', "north region");
  await page.click('#search button[type="submit"]');
  await page.waitForSelector("#search-note");
  await page.waitForFunction('document.querySelectorAll("#runs tr[data-run]").length === 1');
  assert.ok(await page.$(`tr[data-run="${ids.agent}"]`));
  await ui.go("?verdict=does_not_verify");
  await page.waitForSelector(`tr[data-run="${ids.tampered}"]`);
  assert.equal(await page.$$eval("#runs tr[data-run]", (rows) => rows.length), 1);
  await ui.go("?tool=write_file&q=revenue");
  await page.waitForSelector(`tr[data-run="${ids.agent2}"]`);
  await verdicts(page);
  assert.equal(await overflow(page), 0);
  await screenshot(page, "search");
  assert.deepEqual(ui.errors, []);
});

browserTest(
  "compare aligns two agent versions' steps, marks the first divergence, and diffs their specs",
  async () => {
    await using ui = await open();
    const { page, ids } = ui;
    await ui.go(`compare?a=${ids.agent}&b=${ids.agent2}`);
    await page.waitForSelector("#first-divergence");
    assert.equal(await page.$eval("#first-divergence", (e) => e.getAttribute("data-step")), "1");
    assert.ok(await page.$('#spec tr.diff[data-path="instructions"]'));
    assert.match(await text(page, "#divergence"), /first differ at step 1/);
    assert.equal(await overflow(page), 0);
    await screenshot(page, "compare");
    assert.deepEqual(ui.errors, []);
  },
);

browserTest("closing the demo", async () => {
  if (made) await (await made).t[Symbol.asyncDispose]();
});
