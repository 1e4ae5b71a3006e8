/** Drives Debian's Chromium headless with puppeteer-core for the viewer's tests (`.ci/peers/chromium.sh`). */
import { join } from "node:path";
import { skipWithout } from "../../_peers.ts";
import puppeteer, { type Browser, type Page } from "puppeteer-core";

const ROOT = new URL("../../../", import.meta.url).pathname;

/** The Chromium to drive: PROVE_TEST_CHROMIUM, which .ci/peers/chromium.sh exports. */
export const CHROMIUM: string | null = Deno.env.get("PROVE_TEST_CHROMIUM") || null;

/** Outside CI, the browser tests are skipped without Chromium; in CI they fail. */
export const NO_BROWSER: boolean = skipWithout("chromium");

/** Where the screenshots go: PROVE_TEST_ARTIFACTS, or .tools/artifacts/ui. */
export const ARTIFACTS: string = Deno.env.get("PROVE_TEST_ARTIFACTS") ??
  join(ROOT, ".tools", "artifacts", "ui");

/** Starts Chromium headless with a fresh profile and no background networking. */
export async function launch(): Promise<Browser & AsyncDisposable> {
  if (CHROMIUM === null) {
    throw new Error("PROVE_TEST_CHROMIUM is not set: CI installs Chromium with .ci/peers/chromium.sh");
  }
  const profile = await Deno.makeTempDir({ prefix: "prove-ui-chromium-" });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    userDataDir: profile,
    headless: true,
    defaultViewport: { width: 1360, height: 900, deviceScaleFactor: 1 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
  return Object.assign(browser, {
    [Symbol.asyncDispose]: async () => {
      await browser.close().catch(() => {});
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  });
}

/** A new page whose console errors and page errors are collected: a page test fails on any of them. */
export async function openPage(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => errors.push(`page: ${(e as Error).message ?? e}`));
  page.on("requestfailed", (r) => {
    if (!r.url().includes("/live?")) errors.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  return { page, errors };
}

/** Saves a screenshot of the whole page as a test artifact, and in docs/images/ with PROVE_UPDATE_SCREENSHOTS=1. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  const bytes = await page.screenshot({ fullPage: true, type: "png" });
  await Deno.writeFile(join(ARTIFACTS, `${name}.png`), bytes);
  if (Deno.env.get("PROVE_UPDATE_SCREENSHOTS") === "1") {
    await Deno.mkdir(join(ROOT, "docs", "images"), { recursive: true });
    await Deno.writeFile(join(ROOT, "docs", "images", `ui-${name}.png`), bytes);
  }
}
