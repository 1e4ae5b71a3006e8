/**
 * Where the page is: the viewer's base path (`/t/TOKEN/`, from the script's own address, so no page writes
 * the token anywhere), links and moves between pages without reloading, and what a page leaves behind when the
 * next one is drawn (its timers and its live feed).
 * @module
 */
import { type Attrs, h, type Kid } from "./dom.ts";

/** The viewer's base path, under which every address lies: the script is `BASE + "assets/app.js"`. */
export const BASE: string = new URL("../", import.meta.url).pathname;

/** The address of a path under the base. */
export function href(path: string): string {
  return BASE + path;
}

/** The page's path under the base, as it is in the address bar (percent-encoded). */
export function here(): string {
  const path = location.pathname;
  return path.startsWith(BASE) ? path.slice(BASE.length) : "";
}

let router: () => void = () => {};
let leaving: (() => void)[] = [];

/** Sets what draws the page of the address. */
export function setRouter(draw: () => void): void {
  router = draw;
}

/** Runs what the page left to do when it goes (stops its timers, closes its live feed). */
export function leave(): void {
  const now = leaving;
  leaving = [];
  for (const fn of now) fn();
}

/** Adds something to do when the page goes. */
export function onLeave(fn: () => void): void {
  leaving.push(fn);
}

/** Goes to a page (a path under the base, with its query) without reloading. */
export function go(path: string): void {
  history.pushState(null, "", href(path));
  router();
}

/** A link to a page of the viewer that moves without reloading (and opens a new tab as a link does). */
export function link(path: string, kids: Kid, options: { cls?: string | null } = {}): HTMLAnchorElement {
  const attrs: Attrs = {
    href: href(path),
    class: options.cls ?? null,
    onclick: (event: Event) => {
      const e = event as MouseEvent;
      if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      go(path);
    },
  };
  return h("a", attrs, kids);
}

/** A link to a whole part that a page cut (a payload, an answer), opened in a new tab. */
export function wholeLink(path: string, text: string): HTMLAnchorElement {
  return h("a", { href: href(path), target: "_blank", rel: "noopener noreferrer", class: "whole" }, text);
}
