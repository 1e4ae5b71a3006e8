/**
 * {@linkcode replay}: the live feed of a run that has ended, rebuilt from its evidence, so that a viewer who
 * connects after the end sees the same items as one who watched it live.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";
import { verifyEvidence } from "../evidence/verify.ts";
import { type Problem, problem } from "../evidence/problem.ts";
import { FileRunRecord } from "../store/file_store.ts";
import type { EvidenceStore } from "../store/store.ts";
import type { Level } from "../telemetry/attributes.ts";
import { answerOf, FeedCounter, type FeedItem, feedStatus, replyOf } from "./feed.ts";
import { payloadOf, shownAt } from "./live.ts";

/**
 * A run that {@linkcode replay} refuses: it does not verify, or it has not ended.
 *
 * @example
 * ```ts
 * import { ProveviError, ReplayRefused } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new ReplayRefused("r1", [{
 *   code: "manifest.missing",
 *   file: "manifest.json",
 *   line: null,
 *   seq: null,
 *   message: "the run has no manifest",
 * }]);
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "ReplayRefused");
 * assert.equal(error.problems.length, 1);
 * ```
 */
export class ReplayRefused extends ProveviError {
  override name = "ReplayRefused";
  /** The problems the check found. */
  readonly problems: Problem[];

  /** @param runId The run. @param problems What its check found. */
  constructor(runId: string, problems: Problem[]) {
    super(
      `cannot replay run "${runId}": ${problems[0]?.message}${
        problems.length > 1 ? ` (and ${problems.length - 1} more problems)` : ""
      }; run prove verify ${runId} to see them all`,
    );
    this.problems = problems;
  }
}

/** Options of {@linkcode replay}. */
export interface ReplayOptions {
  /** The run's folder, to read the evidence from instead of asking the store. */
  folder?: string;
}

/**
 * The feed of a run that has ended, from its evidence, at a live viewer's level. It checks the run's chain,
 * payloads and manifest first, before the first item, and refuses a run that does not verify; a run that has
 * not ended has no manifest, so it does not verify either.
 *
 * Each model call's answer is one `text` item with the whole answer, only at `bodies`: it comes just before
 * the call's `model_called` item, where a live feed streamed its pieces. A stream that failed part way gives
 * its text so far after its `step_failed` item. The last item is `done`, whose status is `cancelled` for a run
 * that ended with `run_failed` and `CancelledError`. With a level of `null` the feed is empty.
 *
 * @param store The store that holds the run (ignored for reading when `folder` is given).
 * @param runId The run's ID.
 * @param level The live viewer's level, as `policy.liveLevel()` gives it.
 * @param options `folder`: the run folder to read.
 * @returns The items, numbered from 1.
 * @throws RunNotFound when the store has no such run; ReplayRefused when it does not verify or has not ended.
 * @example
 * ```ts
 * import { FileStore, replay } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const items = await replay(store, "run-20261129T120000Z-0badc0de", "names");
 * assert.deepEqual(items.at(-1), { type: "done", n: items.length, run_id: "run-20261129T120000Z-0badc0de", status: "completed" });
 * ```
 */
export async function replay(
  store: EvidenceStore,
  runId: string,
  level: Level | null,
  options: ReplayOptions = {},
): Promise<FeedItem[]> {
  const record: RunRecord = options.folder !== undefined
    ? new FileRunRecord(runId, options.folder)
    : await store.readRun(runId);
  const read = await verifyEvidence(record);
  const last = read.events.at(-1);
  const status = feedStatus(last);
  const problems = [...read.problems];
  if (status === null) {
    problems.unshift(problem(
      "replay.not_ended",
      `it has not ended: its last event is ${last?.type ?? "missing"}, not run_completed or run_failed`,
    ));
  }
  if (problems.length) throw new ReplayRefused(runId, problems);
  return await replayEvents(record, read.events, level);
}

/**
 * The feed of a run's events that the caller has already verified, as {@linkcode replay} gives it after its
 * check: for a viewer that checks the run once and shows both the verdict and the feed.
 *
 * @param record The run, to read the payloads from.
 * @param events Its events, verified, ending with `run_completed` or `run_failed`.
 * @param level The live viewer's level.
 * @returns The items, numbered from 1; empty at level null. At `bodies` an item's data is its event's own
 *   data, not a copy (a replay copies nothing it does not cut): change neither.
 * @throws RangeError when the events do not end the run.
 * @example
 * ```ts
 * import { replayEvents } from "./replay.ts";
 * // const items = await replayEvents(record, check.events, "bodies");
 * ```
 */
export async function replayEvents(
  record: RunRecord,
  events: readonly EvidenceEvent[],
  level: Level | null,
): Promise<FeedItem[]> {
  const status = feedStatus(events.at(-1));
  if (status === null) throw new RangeError("replayEvents() needs the events of a run that has ended");
  if (level === null) return [];
  const feed = new FeedCounter();
  const items: FeedItem[] = [];
  if (level === "bodies") record = await prefetched(record, events);
  for (const event of events) {
    const reply = level === "bodies" ? replyOf(event) : null;
    const text = reply === null ? null : answerOf(await payloadOf(record, reply));
    const item = await shownAt(event, level, { record, share: true });
    if (text !== null && event.type === "model_called") items.push(feed.number({ type: "text", text }));
    if (item) items.push(feed.number(item));
    if (text !== null && event.type === "step_failed") items.push(feed.number({ type: "text", text }));
  }
  items.push(feed.number({ type: "done", run_id: record.runId, status }));
  return items;
}

/**
 * The run with the payloads that a feed at `bodies` reads already read, many at once: one by one, the reads of
 * a long run's payloads wait on each other.
 */
async function prefetched(record: RunRecord, events: readonly EvidenceEvent[]): Promise<RunRecord> {
  const digests = [
    ...new Set(
      events.flatMap((e) => [e.payload, replyOf(e)].filter((d): d is string => typeof d === "string")),
    ),
  ];
  const read = new Map<string, Promise<Uint8Array>>();
  let next = 0;
  const worker = async () => {
    while (next < digests.length) {
      const digest = digests[next++]!;
      const bytes = record.payload(digest);
      read.set(digest, bytes);
      await bytes.catch(() => {});
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, digests.length) }, worker));
  return {
    runId: record.runId,
    folder: record.folder,
    eventsText: () => record.eventsText(),
    manifestText: () => record.manifestText(),
    payloadNames: () => record.payloadNames(),
    payloadInfo: (digest) => record.payloadInfo(digest),
    payloadPack: () => record.payloadPack(),
    payload: (digest) => read.get(digest) ?? record.payload(digest),
  };
}
