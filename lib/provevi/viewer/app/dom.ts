/**
 * The one way the viewer's script makes the page: {@linkcode h} builds elements, and every text from the
 * store goes in as text (`textContent`, text nodes), never as HTML. Small builders of the pages' parts
 * (tables, cards, pills) sit beside it.
 * @module
 */

/** A child of an element: a node, a text, or a list of children; null, undefined and false add nothing. */
export type Kid = Node | string | number | null | undefined | false | readonly Kid[];

/** Attributes of an element: `class`, `text`, `on…` listeners, and any attribute as text or a flag. */
export type Attrs = {
  [name: string]: string | number | boolean | null | undefined | ((event: Event) => void);
};

/**
 * An element with attributes and children.
 *
 * @example
 * ```ts
 * import { h } from "./dom.ts";
 * h("a", { href: "runs/x", class: "mono" }, "run x");
 * ```
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...kids: Kid[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (/^on/i.test(name)) throw new TypeError(`${name} takes a function, never text: text is not code`);
    else if (name === "class") el.className = String(value);
    else if (name === "text") el.textContent = String(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  add(el, kids);
  return el;
}

/** Adds children to an element, as text where they are text. */
export function add(el: Node, kid: Kid): void {
  if (kid === null || kid === undefined || kid === false) return;
  if (Array.isArray(kid)) {
    for (const k of kid as readonly Kid[]) add(el, k);
    return;
  }
  el.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
}

/** A status as a coloured pill. */
export function pill(status: string): HTMLElement {
  return h("span", { class: "pill " + status, "data-status": status }, status);
}

/** The words of a verdict's kind, as the server names them. */
const VERDICTS: Record<string, { word: string; icon: string }> = {
  verified: { word: "verified", icon: "✓" },
  does_not_verify: { word: "does not verify", icon: "✕" },
  cannot_check: { word: "cannot check here", icon: "?" },
  running: { word: "not sealed yet", icon: "…" },
  pending: { word: "checking…", icon: "·" },
};

/** A verdict's kind as a badge: verified, does not verify, cannot check here, not sealed, or being checked. */
export function verdictBadge(kind: string, title?: string): HTMLElement {
  const v = VERDICTS[kind] ?? { word: kind, icon: "·" };
  return h(
    "span",
    { class: "vbadge v-" + kind, "data-verdict": kind, title: title ?? "the verdict of prove verify" },
    h("span", { class: "vicon" }, v.icon),
    v.word,
  );
}

/** A value the level hides, said so (never shown as if absent). */
export function hiddenMark(what = "hidden at this level"): HTMLElement {
  return h("span", { class: "hidden-mark", title: what }, "hidden");
}

/** An event type as a tag. */
export function tag(type: string): HTMLElement {
  return h("span", { class: "tag t-" + type }, type);
}

/** An error, as the page shows it. */
export function errorBox(error: unknown): HTMLElement {
  return h("div", { class: "error-box", role: "alert" }, String((error as Error)?.message ?? error));
}

/** A muted line where there is nothing to show. */
export function empty(text: string): HTMLElement {
  return h("div", { class: "empty" }, text);
}

/** A card, with an optional title; `flush` for a table that meets its edges, an `id`, and more classes. */
export function card(
  title: string | null,
  kids: Kid,
  options: { flush?: boolean; id?: string; cls?: string } = {},
): HTMLElement {
  return h(
    "section",
    {
      class: ["card", options.flush ? "flush" : "", options.cls ?? ""].join(" ").trim(),
      id: options.id ?? null,
    },
    title ? h("h2", null, title) : null,
    kids,
  );
}

/** A table with a head row. */
export function table(head: readonly string[], rows: Kid): HTMLTableElement {
  return h(
    "table",
    null,
    h("thead", null, h("tr", null, head.map((c) => h("th", null, c)))),
    h("tbody", null, rows),
  );
}

/** Replaces the page's content. */
export function show(el: Node): void {
  document.getElementById("app")!.replaceChildren(el);
}
