/**
 * The one way the server writes HTML: {@linkcode html}, a tagged template that escapes every value it is given
 * (as Hono's `html` helper does), so no text from a store, a path or a token reaches a page as markup. The pages'
 * content is drawn by the script with `textContent`, never as HTML.
 * @module
 */

/** HTML that {@linkcode html} made, or that the caller vouches for with {@linkcode raw}. */
export class SafeHtml {
  /** @param text The markup. */
  constructor(readonly text: string) {}

  /** The markup. */
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Escapes text for HTML, in text or in a quoted attribute.
 *
 * @example
 * ```ts
 * import { escapeHtml } from "./viewer_html.ts";
 * escapeHtml('<a href="x">'); // "&lt;a href=&quot;x&quot;&gt;"
 * ```
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * A template of HTML whose values are escaped; a value that is itself {@linkcode SafeHtml} goes in as it is,
 * and a list goes in item by item.
 *
 * @example
 * ```ts
 * import { html } from "./viewer_html.ts";
 * html`<p title="${'"x"'}">${"<b>"}</p>`.text; // '<p title="&quot;x&quot;">&lt;b&gt;</p>'
 * ```
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  const piece = (value: unknown): string => {
    if (value instanceof SafeHtml) return value.text;
    if (Array.isArray(value)) return value.map(piece).join("");
    if (value === null || value === undefined || value === false) return "";
    return escapeHtml(String(value));
  };
  let out = strings[0]!;
  values.forEach((value, i) => out += piece(value) + strings[i + 1]!);
  return new SafeHtml(out);
}

/** Markup the caller vouches for, as it is (a constant of the viewer, never text from outside). */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
