/**
 * The live feed as a part of the run: it opens once the run folder exists, takes every event and every piece of
 * the model's text, and closes before the seal.
 * @module
 */
import type { EvidenceEvent, FeedItem, Json, Level } from "../../provevi/mod.ts";
import type { PartRun, RunPart } from "../run/run_part.ts";
import { LiveFeed } from "./live_feed.ts";

/**
 * The live feed part of a run, at the level of the policy's live destination (none: the feed shows nothing).
 *
 * @example
 * ```ts
 * import { LiveFeedPart } from "./live_feed_part.ts";
 * const part = new LiveFeedPart("names", { onItem: (item) => console.log(item.type) });
 * ```
 */
export class LiveFeedPart implements RunPart {
  readonly name = "live feed";
  readonly #level: Level | null;
  readonly #onItem: ((item: FeedItem) => void) | undefined;
  #feed: LiveFeed | null = null;

  /** @param level The level of the policy's live destination, or null. @param options `onItem`: each item. */
  constructor(level: Level | null, options: { onItem?: (item: FeedItem) => void } = {}) {
    this.#level = level;
    this.#onItem = options.onItem;
  }

  /** Opens the feed in the run folder. */
  async beforeStart(run: PartRun): Promise<void> {
    this.#feed = await LiveFeed.open(run.ctx.runId, run.ctx.folder, this.#level, {
      ...(this.#onItem ? { onItem: this.#onItem } : {}),
    });
  }

  /** Takes an event. */
  onEvent(event: EvidenceEvent): void {
    this.#feed?.event(event);
  }

  /** Takes a piece of the model's text. */
  onText(piece: string): void {
    this.#feed?.text(piece);
  }

  /** Takes a whole reply that did not stream. */
  onReply(reply: Json): void {
    this.#feed?.answer(reply);
  }

  /** Gives out every item, and closes the feed's file. */
  async beforeSeal(): Promise<void> {
    const feed = this.#feed;
    this.#feed = null;
    await feed?.close();
  }

  /** Closes the feed's file when the run ended before its seal. */
  async close(): Promise<void> {
    await this.beforeSeal();
  }
}
