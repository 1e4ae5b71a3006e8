/**
 * Bundles the viewer's script: `app/main.ts`, checked TypeScript for the browser, becomes one JavaScript
 * module with `deno bundle`, kept as a string in `viewer_script.ts` so that the compiled `prove` holds it and
 * reads no file next to itself. `deno task viewer:bundle` runs this; a test bundles again and compares, so the
 * committed script is always the bundle of the committed source.
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Where the bundle is kept. */
export const SCRIPT_MODULE: string = join(ROOT, "lib", "provevi", "viewer", "viewer_script.ts");

/**
 * Bundles `app/main.ts` for the browser.
 *
 * @returns The JavaScript module.
 * @throws Error with `deno bundle`'s own message when it fails.
 */
export async function bundleScript(): Promise<string> {
  const out = await new Deno.Command("deno", {
    args: ["bundle", "--quiet", "--platform", "browser", "--format", "esm", "lib/provevi/viewer/app/main.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`deno bundle failed: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

/** The text of `viewer_script.ts` for a bundle: one string, a line of the bundle per line of the module. */
export function scriptModule(js: string): string {
  const lines = js.replace(/\n$/, "").split("\n").map((line) => `  ${JSON.stringify(line)},`);
  return `/**
 * The viewer's script, served as \`assets/app.js\`: the bundle of \`app/main.ts\` (checked TypeScript for the
 * browser), made by \`deno task viewer:bundle\`; do not edit it here. A test bundles the source again and
 * compares.
 * @module
 */

/** The script, a JavaScript module. */
export const APP_JS: string = [
${lines.join("\n")}
].join("\\n") + "\\n";
`;
}

if (import.meta.main) {
  await Deno.writeTextFile(SCRIPT_MODULE, scriptModule(await bundleScript()));
  console.log(`viewer:bundle: wrote ${SCRIPT_MODULE}`);
}
