/**
 * The viewer's page, style and script, as strings in the module tree: a compiled `prove` has them, and the
 * browser fetches nothing but the viewer itself.
 * @module
 */
export { APP_CSS } from "./viewer_style.ts";
export { APP_JS } from "./viewer_script.ts";

/**
 * The one HTML page of the viewer; its script draws each page from the address.
 *
 * @returns The HTML.
 * @example
 * ```ts
 * import { pageHtml } from "./viewer_assets.ts";
 * pageHtml().startsWith("<!doctype html>"); // true
 * ```
 */
export function pageHtml(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>prove ui</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
</head>
<body>
<header class="top"></header>
<main id="app"></main>
<script src="/assets/app.js" defer></script>
</body>
</html>
`;
}
