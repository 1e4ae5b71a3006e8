/**
 * The live feed of a running run: each event as it is written, cut to the level of the policy's `live`
 * destination (narrowed by the run file), and the model's answer in the pieces it streams in, at `bodies`.
 * With no live destination nothing is shown. The items go to a listener (`RunOptions.onFeed`) and to
 * `live.jsonl` in the run folder, beside `evidence/` and never part of it, so that a viewer in another process
 * (`prove ui`) can follow the run.
 * @module
 */
import { join } from "node:path";
import { openFileNoWait } from "../../provevi/evidence/fd_file.ts";
import type { EvidenceEvent, FeedItem, Json, Level } from "../../provevi/mod.ts";
import { answerOf, shownAt } from "../../provevi/live/mod.ts";
import { FeedCounter, feedStatus, type UnnumberedItem } from "../../provevi/live/mod.ts";
import { FileRunRecord } from "../../provevi/store/mod.ts";

/** The name of the live feed's file in a run folder. */
export const LIVE_FILE = "live.jsonl";

/** Options of {@linkcode LiveFeed.open}. */
export interface LiveFeedOptions {
  /** Called with each item, in order. */
  onItem?: (item: FeedItem) => void;
  /** Write the items to `<folder>/live.jsonl` too (true by default). */
  file?: boolean;
}

/**
 * One run's live feed. Events and text pieces are taken in the order they happen and given out in that order,
 * though cutting an event at `bodies` reads its payload.
 *
 * @example
 * ```ts
 * import { LiveFeed } from "./live_feed.ts";
 * // const feed = await LiveFeed.open("run-x", folder, policy.liveLevel(), { onItem: console.log });
 * // recorder.onEvent = (e) => feed.event(e);
 * // …
 * // await feed.close();
 * ```
 */
export class LiveFeed {
  readonly #runId: string;
  readonly #level: Level | null;
  readonly #record: FileRunRecord;
  readonly #counter = new FeedCounter();
  readonly #onItem: ((item: FeedItem) => void) | undefined;
  readonly #file: Deno.FsFile | null;
  #tail: Promise<void> = Promise.resolve();
  #ended = false;

  private constructor(
    runId: string,
    folder: string,
    level: Level | null,
    options: LiveFeedOptions,
    file: Deno.FsFile | null,
  ) {
    this.#runId = runId;
    this.#level = level;
    this.#record = new FileRunRecord(runId, folder);
    this.#onItem = options.onItem;
    this.#file = file;
  }

  /**
   * Opens the feed of a run.
   *
   * @param runId The run's ID.
   * @param folder The run folder (payloads are read from its `evidence/payloads/` or `payloads.pack`).
   * @param level The live viewer's level, or null: then the feed shows nothing and writes no file.
   * @param options The listener, and whether to write `live.jsonl`.
   * @returns The feed; close it after the run's last event.
   */
  static async open(
    runId: string,
    folder: string,
    level: Level | null,
    options: LiveFeedOptions = {},
  ): Promise<LiveFeed> {
    const file = level !== null && options.file !== false
      // the run's program can write its folder: a link planted at the file is not followed, a FIFO not waited on
      ? await openFileNoWait(join(folder, LIVE_FILE), {
        follow: false,
        write: true,
        create: true,
        append: true,
      })
      : null;
    return new LiveFeed(runId, folder, level, options, file);
  }

  /** The level the feed shows, or null. */
  get level(): Level | null {
    return this.#level;
  }

  /** Takes one event as it is written; the run's ending event also ends the feed with `done`. */
  event(event: EvidenceEvent): void {
    if (this.#level === null || this.#ended) return;
    const status = feedStatus(event);
    if (status !== null) this.#ended = true;
    const level = this.#level;
    this.#queue(async () => {
      const item = await shownAt(event, level, { record: this.#record });
      const items: UnnumberedItem[] = item ? [item] : [];
      if (status !== null) items.push({ type: "done", run_id: this.#runId, status });
      return items;
    });
  }

  /** Takes a piece of a model's answer as it streams; shown only at `bodies`. */
  text(piece: string): void {
    if (this.#level !== "bodies" || this.#ended || piece === "") return;
    this.#queue(() => Promise.resolve([{ type: "text", text: piece }]));
  }

  /**
   * Takes the whole answer of a model call that did not stream, from its reply, just before its event.
   * @param reply The reply as provrun stores it.
   */
  answer(reply: Json): void {
    const text = answerOf(reply);
    if (text !== null) this.text(text);
  }

  #queue(make: () => Promise<UnnumberedItem[]>): void {
    this.#tail = this.#tail.then(async () => {
      let items: UnnumberedItem[];
      try {
        items = await make();
      } catch {
        // A payload that cannot be read now leaves its event out of the live feed; the evidence is unharmed,
        // and the replay of the ended run checks it.
        return;
      }
      for (const unnumbered of items) {
        const item = this.#counter.number(unnumbered);
        if (this.#file) {
          try {
            await this.#file.write(new TextEncoder().encode(JSON.stringify(item) + "\n"));
          } catch { /* the viewer's copy is lost; the run and its evidence go on */ }
        }
        try {
          this.#onItem?.(item);
        } catch { /* a listener's error is not the run's */ }
      }
    });
  }

  /** Waits until every item is given out, and closes the file. */
  async close(): Promise<void> {
    await this.#tail;
    this.#file?.close();
  }
}
