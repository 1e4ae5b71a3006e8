/**
 * The viewer's page, style and script, in the module tree: a compiled `prove` has them, and the browser
 * fetches nothing but the viewer itself. The script is `app/`, checked TypeScript bundled by
 * `deno task viewer:bundle` into `viewer_script.ts`.
 * @module
 */
import { html } from "./viewer_html.ts";

export { APP_CSS } from "./viewer_style.ts";
export { APP_JS } from "./viewer_script.ts";

/**
 * The one HTML page of the viewer; its script draws each page from the address.
 *
 * @param base The viewer's base path, `/t/TOKEN/`: the page's style and script are under it.
 * @returns The HTML.
 * @example
 * ```ts
 * import { pageHtml } from "./viewer_assets.ts";
 * pageHtml("/t/abc/").startsWith("<!doctype html>"); // true
 * ```
 */
export function pageHtml(base: string): string {
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>prove ui</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="${base}assets/app.css">
      </head>
      <body>
        <header class="top"></header>
        <main id="app"></main>
        <script type="module" src="${base}assets/app.js"></script>
      </body>
    </html>
  `.text;
}
