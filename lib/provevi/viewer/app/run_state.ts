/**
 * What a run page holds while it is open: the run's view (its events and spans loaded so far), the events that
 * just came live, the answers streaming, what is selected for the detail panel, and what the page's parts can
 * ask of it.
 * @module
 */
import type { RunView, ViewEvent } from "../run_view.ts";

/** An answer as it streams, and the event it became (null until its model call is written). */
export interface LiveBox {
  seq: number | null;
  text: string;
}

/** What the detail panel shows: an event, or a span of the trace. */
export type Selection = { kind: "event"; seq: number } | { kind: "span"; id: string };

/** A run page's state. */
export interface RunState {
  id: string;
  /** The page asked for the content of a run that does not verify. */
  untrusted: boolean;
  view: RunView;
  /** The seqs of events that came live since the last draw, to flash. */
  fresh: Set<number>;
  live: { boxes: LiveBox[]; open: LiveBox | null };
  /** What the detail panel shows, or null. */
  selected: Selection | null;
  /** Events fetched for the detail panel that are not on the loaded pages, by seq. */
  fetched: Map<number, ViewEvent>;
  /** Reloads the run from the viewer. */
  reload(): void;
  /** Loads the next page of events. */
  moreEvents(): void;
  /** Loads the next page of spans. */
  moreSpans(): void;
  /** Shows an event or a span in the detail panel. */
  select(selection: Selection | null): void;
}

/** The seqs of the events that went wrong, for the page to mark in red. */
export function errorSeqs(view: RunView): Map<number, string> {
  return new Map(view.errors.map((e) => [e.seq, e.kind]));
}
