/**
 * Panels that other parts of the viewer add to a run page, between its facts and what went wrong: each a
 * function of the page's state that gives an element, or null to add nothing. A panel is drawn with the page
 * (and again when the page is drawn again), so it reads what it needs from the state or fetches it itself.
 *
 * @example
 * ```ts
 * import { RUN_PANELS } from "./run_panels.ts";
 * import { card, h } from "./dom.ts";
 * // RUN_PANELS.push((state) => card("In the log", h("span", null, state.view.run_id)));
 * ```
 * @module
 */
import type { RunState } from "./run_state.ts";

/** A panel of a run page. */
export type RunPanel = (state: RunState) => HTMLElement | null;

/** The panels other parts add to a run page, in order. */
export const RUN_PANELS: RunPanel[] = [];
