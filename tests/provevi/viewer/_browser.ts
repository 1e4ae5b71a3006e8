/** Drives Debian's Chromium headless with puppeteer-core for the viewer's tests (`.ci/peers/chromium.sh`). */
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";

const ROOT = new URL("../../../", import.meta.url).pathname;

/** The Chromium to drive: PROVE_TEST_CHROMIUM, which .ci/peers/chromium.sh exports. */
export const CHROMIUM: string | null = Deno.env.get("PROVE_TEST_CHROMIUM") || null;

/** Where the screenshots go: PROVE_TEST_ARTIFACTS, or .tools/screenshots, which the CI run keeps. */
export const ARTIFACTS: string = Deno.env.get("PROVE_TEST_ARTIFACTS") ?? join(ROOT, ".tools", "screenshots");

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
    // The width the viewer is made for: a laptop's screen, with nothing scrolled sideways.
    defaultViewport: { width: 1280, height: 900, deviceScaleFactor: 1 },
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

/**
 * Saves a screenshot of the whole page as a test artifact, and, for one that docs/ui.md shows, in docs/images/
 * with PROVE_UPDATE_SCREENSHOTS=1.
 */
export async function screenshot(page: Page, name: string, options: { docs?: boolean } = {}): Promise<void> {
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  // From the top, so that the sticky header and detail panel are drawn where a person first sees them.
  await page.evaluate("window.scrollTo(0, 0)");
  // A window as tall as the page, rather than a capture beyond the window: Chromium leaves parts of a tall page
  // unpainted beside a sticky element when it captures beyond the window.
  const viewport = page.viewport()!;
  const height = Number(await page.evaluate("document.documentElement.scrollHeight"));
  await page.setViewport({ ...viewport, height: Math.min(Math.max(height, viewport.height), 12000) });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const bytes = await page.screenshot({ type: "png" });
  await page.setViewport(viewport);
  await Deno.writeFile(join(ARTIFACTS, `${name}.png`), bytes);
  if (Deno.env.get("PROVE_UPDATE_SCREENSHOTS") === "1" && options.docs !== false) {
    await Deno.mkdir(join(ROOT, "docs", "images"), { recursive: true });
    await Deno.writeFile(join(ROOT, "docs", "images", `ui-${name}.png`), bytes);
  }
}

/** The page's width past the window's: 0 when nothing scrolls sideways. */
export async function overflow(page: Page): Promise<number> {
  return Number(
    await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"),
  );
}
