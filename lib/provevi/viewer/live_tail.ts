/**
 * Follows a running run for the viewer: its events as they are appended to `events.jsonl`, each with its
 * content at the viewer's level cut as a page cuts it, and, at `bodies`, the pieces of the model's answer from the live feed that
 * provrun writes beside the evidence (`live.jsonl`), in the feed's order. It ends when the run ends.
 * @module
 */
import { join } from "node:path";
import { sha256Hex } from "../evidence/hash.ts";
import { LineReader } from "../evidence/line_reader.ts";
import { jsonLineWeight } from "../evidence/json_depth.ts";
import { EVENTS_READ_WEIGHT } from "../evidence/read_events.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";
import { type FeedItem, feedStatus } from "../live/feed.ts";
import { shownAt } from "../live/live.ts";
import type { Level } from "../telemetry/attributes.ts";
import { type ViewEvent, viewEvent } from "./view_event.ts";

/** What the tail gives: an event, a piece of an answer, or the end. */
export type TailItem =
  | { kind: "event"; event: ViewEvent }
  | { kind: "text"; text: string }
  | { kind: "end"; status: string };

/** Options of {@linkcode liveTail}. */
export interface LiveTailOptions {
  /** The viewer's level for the run. */
  level: Level | null;
  /** Give only the events after this seq (-1: all). */
  after?: number;
  /** Stops the tail. */
  signal?: AbortSignal;
  /** How often to look for more, in milliseconds (100 by default). */
  pollMs?: number;
  /**
   * The most the events read may weigh ({@linkcode jsonLineWeight}; {@linkcode EVENTS_READ_WEIGHT} by default),
   * as the verifier weighs them: past it the tail reads no more and ends, "cut".
   */
  weight?: number;
}

/**
 * Follows a running run.
 *
 * @param record The run; it must have a folder on this machine.
 * @param options The viewer's level, where to start, and a signal to stop.
 * @returns The items, until the run ends or the signal aborts.
 * @example
 * ```ts
 * import { liveTail } from "./live_tail.ts";
 * // for await (const item of liveTail(record, { level: "bodies" })) send(item);
 * ```
 */
export async function* liveTail(record: RunRecord, options: LiveTailOptions): AsyncGenerator<TailItem> {
  if (record.folder === null) return;
  const { level, signal } = options;
  const after = options.after ?? -1;
  const events = new LineReader(join(record.folder, "evidence", "events.jsonl"));
  const livePath = join(record.folder, "live.jsonl");
  const live = new LineReader(livePath);
  const manifest = join(record.folder, "evidence", "manifest.json");
  const known: { event: EvidenceEvent; line: string }[] = [];
  let given = -1;
  const view = viewer(record, level);
  // The tail keeps the events it parses, and a line of many small values ({"a":[{},{},…]}, in a folder the run's
  // program writes) takes the heap at some 30 times its text: they are weighed before they are parsed.
  let left = options.weight ?? EVENTS_READ_WEIGHT;
  const readEvents = async () => {
    if (left < 0) return;
    for (const line of await events.next()) {
      left -= jsonLineWeight(line);
      if (left < 0) return; // past the weight: nothing more is read
      try {
        known.push({ event: JSON.parse(line) as EvidenceEvent, line });
      } catch { /* a line being written; the run's check reports a line that is not JSON */ }
    }
  };
  // Gives the events up to seq `upTo` that are not given yet; true when the run's end was among them.
  async function* giveUpTo(upTo: number): AsyncGenerator<TailItem, boolean> {
    while (given + 1 < known.length && given + 1 <= upTo) {
      const { event, line } = known[++given]!;
      if (event.seq > after) yield { kind: "event", event: await view(event, line, given) };
      const end = feedStatus(event);
      if (end !== null) {
        // The seal follows the last event: wait for it, so that the page that reloads finds the run sealed.
        for (let i = 0; i < 100 && !signal?.aborted && !(await exists(manifest)); i++) await sleep(100);
        yield { kind: "end", status: end };
        return true;
      }
    }
    return false;
  }
  while (!signal?.aborted) {
    await readEvents();
    if (left < 0) {
      if (yield* giveUpTo(Infinity)) return;
      yield { kind: "end", status: "cut" };
      return;
    }
    const fed = level === "bodies" && await Deno.stat(livePath).then(() => true, () => false);
    if (fed) {
      for (const line of await live.next()) {
        let item: FeedItem;
        try {
          item = JSON.parse(line) as FeedItem;
        } catch {
          continue;
        }
        if (item.type === "event") {
          // The feed is no evidence, and the run's program can write it: an item may name an event that never
          // comes. The events that come are given while it waits, and the run's seal ends the wait.
          while (known.length <= item.seq && !signal?.aborted && left >= 0) {
            await readEvents();
            if (yield* giveUpTo(item.seq)) return;
            if (known.length > item.seq) break;
            if (await exists(manifest)) break;
            await sleep(options.pollMs ?? 100);
          }
          if (yield* giveUpTo(item.seq)) return;
        } else if (item.type === "text" && given >= after) {
          yield { kind: "text", text: item.text };
        }
      }
    } else if (yield* giveUpTo(Infinity)) return;
    if (await exists(manifest)) {
      await readEvents();
      if (yield* giveUpTo(Infinity)) return;
      yield { kind: "end", status: "cut" };
      return;
    }
    await sleep(options.pollMs ?? 100);
  }
}

/** An event as the tail gives it: its view at the viewer's level, with its line's hash and number. */
function viewer(record: RunRecord, level: Level | null) {
  return async (e: EvidenceEvent, line: string, index: number): Promise<ViewEvent> =>
    await viewEvent(e, {
      record,
      level,
      shown: await shownAt(e, level, { share: true }).catch(() => null),
      lineSha256: sha256Hex(line),
      line: index + 1,
      // Always, though the answer streamed: the feed (live.jsonl) is no evidence, and the run's program can write
      // it, so the page shows the recorded answer in place of what streamed once the call's event comes.
      answer: true,
    });
}

function exists(path: string): Promise<boolean> {
  return Deno.stat(path).then(() => true, () => false);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
