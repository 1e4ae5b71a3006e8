/**
 * What a viewer of a run's live feed may see: {@linkcode shownAt} cuts one evidence event to the live viewer's
 * level (provevi-reference.txt, "Show a run to a live viewer").
 * @module
 */
import { attributesFor, type Level, levelRank, USAGE_KEYS } from "../telemetry/attributes.ts";
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import {
  plainAttribute,
  plainExperiment,
  plainName,
  plainSpanName,
  RUN_MODEL_KEYS,
} from "../telemetry/plain_name.ts";
import type { RunRecord } from "../evidence/record.ts";

/**
 * The data keys that hold names, shown at `names` when their value passes `plainAttribute` with
 * {@linkcode RUN_MODEL_KEYS}. Any other key stays out below `bodies`: it may hold what a person or a model
 * wrote, such as a note's text, a purpose or a file's name.
 *
 * @example
 * ```ts
 * import { LIVE_NAME_KEYS } from "./live.ts";
 * LIVE_NAME_KEYS.has("model"); // true
 * ```
 */
export const LIVE_NAME_KEYS: ReadonlySet<string> = new Set([
  "model",
  "answered_by",
  "provider",
  "backend",
  "status",
  "sha256",
  "payload_sha256",
  "request_payload",
  "response_payload",
  "parent_run",
  "run_id",
  "mode",
  "tool",
  "tool_name",
  "finish_reason",
  "error_type",
  "kind",
  "trace_id",
  "span_id",
]);

/** The data keys of an experiment, shown at `names` when `plainExperiment` says so. */
const EXPERIMENT_KEYS = new Set(["experiment", "experiment_pin"]);

/**
 * The data keys that hold counts and timings, shown from `usage` when they hold numbers (or a mapping of plain
 * names to numbers).
 *
 * @example
 * ```ts
 * import { LIVE_COUNT_KEYS } from "./live.ts";
 * LIVE_COUNT_KEYS.has("input_tokens"); // true
 * ```
 */
export const LIVE_COUNT_KEYS: ReadonlySet<string> = new Set([
  "input_tokens",
  "output_tokens",
  "total_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "tokens",
  "usage",
  "cost",
  "calls",
  "attempt",
  "attempts",
  "size",
  "bytes",
  "count",
  "exit_code",
  "duration_ms",
  "elapsed_ms",
  "latency_ms",
]);

/** One event item of a live feed (its number `n` is the feed's to give). */
export interface EventItem {
  type: "event";
  run_id: string;
  seq: number;
  time: string;
  event: string;
  component?: string;
  actor?: string;
  data: { [key: string]: Json };
  refs?: string[];
  payload?: Json;
}

function isCounts(value: Json | undefined): boolean {
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.entries(value).every(([k, v]) => plainName(k) && typeof v === "number" && Number.isFinite(v));
}

/**
 * Reads one payload of a run: as JSON if it is JSON, or else as text. It cuts nothing by level.
 *
 * @param record The run.
 * @param digest The payload's SHA-256.
 * @returns The payload.
 * @throws ProveviError when the payload is missing or its bytes do not match its name.
 * @example
 * ```ts
 * import { findRun, payloadOf } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const record = await findRun("run-20261129T120000Z-0badc0de", { runs: "fixtures/runs" });
 * const [name] = await record.payloadNames();
 * assert.notEqual(await payloadOf(record, name!), undefined);
 * ```
 */
export async function payloadOf(record: RunRecord, digest: string): Promise<Json> {
  const text = new TextDecoder().decode(await record.payload(digest));
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

/**
 * The event item of one event for a live viewer at `level`, or `null` when the level is `null`.
 *
 * - Below `bodies`, the item keeps only the data under keys that hold names or counts. At `names`, a name
 *   key's value shows if it passes `plainAttribute` with {@linkcode RUN_MODEL_KEYS}; `experiment` and
 *   `experiment_pin` show if `plainExperiment` says so; the component and the actor show if each is a plain
 *   name. A library span's (`span_recorded`) attributes are cut as for any destination, and its name shows if
 *   `plainSpanName` says so.
 * - `usage` adds the counts and timings, and the usage attributes of a library's span. A mapping among them
 *   shows only if each of its keys is a plain name.
 * - `bodies` adds all the data, the refs, the component and the actor; with `record`, the payload too.
 *
 * @param event The evidence event.
 * @param level The live viewer's level, as `policy.liveLevel()` gives it.
 * @param options `record`: the run, to add the payload at `bodies`. `share`: at `bodies`, the item's data is
 *   the event's own data rather than a copy, for a caller that owns the event and changes neither (a replay
 *   of events read for it); without it the item gets a deep copy.
 * @returns The item, or `null`.
 * @example
 * ```ts
 * import { findRun, shownAt } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const record = await findRun("run-20261129T120000Z-0badc0de", { runs: "fixtures/runs" });
 * const event = JSON.parse((await record.eventsText())!.split("\n")[0]!);
 * assert.equal(await shownAt(event, null), null);
 * assert.equal((await shownAt(event, "names"))?.event, event.type);
 * ```
 */
export async function shownAt(
  event: EvidenceEvent,
  level: Level | null,
  options: { record?: RunRecord; share?: boolean } = {},
): Promise<EventItem | null> {
  if (level === null) return null;
  const rank = levelRank(level);
  const item: EventItem = {
    type: "event",
    run_id: event.run_id,
    seq: event.seq,
    time: event.time,
    event: event.type,
    data: {},
  };
  if (rank === 2) {
    item.component = event.component;
    item.actor = event.actor;
    item.data = options.share === true ? event.data : structuredClone(event.data);
    item.refs = [...event.refs];
    if (options.record && event.payload) item.payload = await payloadOf(options.record, event.payload);
    return item;
  }
  if (plainName(event.component)) item.component = event.component;
  if (plainName(event.actor)) item.actor = event.actor;
  const data: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(event.data)) {
    if (key === "__proto__") continue;
    if (EXPERIMENT_KEYS.has(key)) {
      if (plainExperiment(value)) data[key] = value;
    } else if (LIVE_NAME_KEYS.has(key)) {
      if (plainAttribute(key, value, { modelKeys: RUN_MODEL_KEYS })) data[key] = value;
    } else if (rank >= 1 && LIVE_COUNT_KEYS.has(key)) {
      if (isCounts(value)) data[key] = value;
    }
  }
  if (event.type === "span_recorded") {
    const name = event.data.name;
    if (typeof name === "string" && plainSpanName(name)) data.name = name;
    const attributes = event.data.attributes;
    if (typeof attributes === "object" && attributes !== null && !Array.isArray(attributes)) {
      const cut = attributesFor(attributes, level);
      const shown: { [key: string]: Json } = {};
      for (const [key, value] of Object.entries(cut)) {
        if (USAGE_KEYS.has(key) || plainAttribute(key, value)) shown[key] = value as Json;
      }
      data.attributes = shown;
    }
  }
  item.data = data;
  return item;
}
