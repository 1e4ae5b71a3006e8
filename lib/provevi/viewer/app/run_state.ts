/**
 * What a run page holds while it is open: the run's view (its events and spans loaded so far), the events that
 * just came live, the answers streaming, and what the page's parts can ask of it.
 * @module
 */
import type { RunView } from "../run_view.ts";

/** An answer as it streams, and the event it became (null until its model call is written). */
export interface LiveBox {
  seq: number | null;
  text: string;
}

/** A run page's state. */
export interface RunState {
  id: string;
  /** The page asked for the content of a run that does not verify. */
  untrusted: boolean;
  view: RunView;
  /** The seqs of events that came live since the last draw, to flash. */
  fresh: Set<number>;
  live: { boxes: LiveBox[]; open: LiveBox | null };
  /** Reloads the run from the viewer. */
  reload(): void;
  /** Loads the next page of events. */
  moreEvents(): void;
  /** Loads the next page of spans. */
  moreSpans(): void;
}
