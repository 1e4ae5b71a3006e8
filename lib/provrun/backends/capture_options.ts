/**
 * What the capture of model calls is told: the component its events name, whether it records at all (a model
 * gateway may record each call at the boundary instead), the price of a call, and the callbacks of a run (its
 * token limit, its live feed); and the token counts it gives them.
 * @module
 */
import type { Json } from "../../provevi/mod.ts";
import type { ChatSpanContext } from "./chat_span.ts";

/** The token counts of one model call. */
export interface CallUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Options of the capture. */
export interface CaptureOptions extends ChatSpanContext {
  /** The class named as each event's component. */
  component: string;
  /** Called after each call with its usage, so the run can enforce its token limit. */
  onUsage?: (usage: CallUsage) => void;
  /** Called with each piece of a streamed answer as it arrives (the live feed). */
  onText?: (piece: string) => void;
  /** Called with a whole reply that did not stream, before its `model_called` (the live feed). */
  onReply?: (reply: Json) => void;
  /**
   * False when a model gateway records each call at the boundary: the capture then records nothing and only
   * gives the text, the replies and the usage to the callbacks. True by default.
   */
  record?: boolean;
  /** The cost of a call from its `model_called` data (the run's price table), written as its `cost`. */
  price?: (data: { [key: string]: Json }) => string | null;
}
