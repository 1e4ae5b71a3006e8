/**
 * What the viewer knows of a run before it cuts a page: its events, read once by its check (`verifyRun`) when
 * it is sealed and as they are when it is running; its verdict; the viewer's level for it; and each event's
 * content at that level, uncut, when the run verifies or the content was asked for though it does not. The
 * run page, the parts fetched whole on demand, and compare are all cut from it.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import { type Problem, problem } from "../evidence/problem.ts";
import type { RunRecord } from "../evidence/record.ts";
import { readEventsText } from "../evidence/read_events.ts";
import { type FeedStatus, feedStatus } from "../live/feed.ts";
import { type EventItem, shownAt } from "../live/live.ts";
import { verifyRun, type VerifyRunOptions } from "../runs/verify_run.ts";
import type { EvidenceStore } from "../store/store.ts";
import type { Level } from "../telemetry/attributes.ts";
import type { TelemetryPolicy } from "../telemetry/policy.ts";
import { viewerLevel } from "./viewer_level.ts";
import { receivedOf, type ReceivedView } from "./run_received.ts";
import { sha256Hex } from "../evidence/hash.ts";
import { eventLine } from "../evidence/event.ts";
import { type VerdictKind, verdictKind } from "./run_verdict.ts";

/** The verdict a run page shows. */
export interface ViewVerdict {
  /** False while the run is running: only its chain so far was read. */
  checked: boolean;
  ok: boolean;
  /** What the verdict says, from the problems' codes: verified, does not verify, cannot be checked here, running. */
  kind: VerdictKind;
  /** Each problem with its code (the page prints the message). */
  problems: Problem[];
  /** The pinned URI of the committed bundle that was compared, or null. */
  bundle: string | null;
}

/** Options of {@linkcode runModel}. */
export interface RunModelOptions {
  /** The viewer's telemetry policy. */
  policy: TelemetryPolicy;
  /** The catalog that reads a committed bundle and the experiment, as for `prove verify`. */
  catalog?: VerifyRunOptions["catalog"];
  /** Show the content of a run that does not verify, marked as unverified. */
  untrusted?: boolean;
}

/** A run as the viewer knows it. */
export interface RunModel {
  record: RunRecord;
  events: EvidenceEvent[];
  /** The SHA-256 of each event's line, by index, when the lines were read here rather than by the check. */
  lineHashes: string[];
  /** The line of `events.jsonl` of each event, by index, when the lines were read here (else its index + 1). */
  lineNumbers: number[];
  verdict: ViewVerdict;
  sealed: boolean;
  ended: FeedStatus | null;
  running: boolean;
  level: Level | null;
  note: string | null;
  /** True when content is shown though the run does not verify. */
  untrusted: boolean;
  /** Each event's content at the level, uncut (null where only its structure shows), by index. */
  shown: (EventItem | null)[];
  /** The spans an agent program sent the run, read from its `spans_received` events (none when not shown). */
  received?: ReceivedView[];
}

/**
 * Reads a run for the viewer.
 *
 * @param store The store.
 * @param record The run.
 * @param options The policy, the catalog, and whether to show unverified content.
 * @returns The run as the viewer knows it.
 */
export async function runModel(
  store: EvidenceStore,
  record: RunRecord,
  options: RunModelOptions,
): Promise<RunModel> {
  // An ended run is read once, by its check (the events reach the page through the check's hook); a running
  // run has no check yet, so its events so far are read here.
  const sealed = (await record.manifestText().catch(() => null)) !== null;
  let read = {
    events: [] as EvidenceEvent[],
    lineHashes: [] as string[],
    eventLines: [] as number[],
    problems: [] as Problem[],
  };
  let verdict: ViewVerdict | null = null;
  let unreadable = false;
  if (sealed) {
    const check = await checkSealed(store, record, options);
    verdict = check.verdict;
    if (check.events !== null) read = { events: check.events, lineHashes: [], eventLines: [], problems: [] };
  }
  if (verdict === null || !trusted(verdict)) {
    const text = await record.eventsText().catch(() => null);
    unreadable = text === null;
    const all = readEventsText(text ?? "");
    // A line that is not an event has no place among the events: each event's hash is of its own line.
    read = { ...all, lineHashes: all.eventLines.map((n) => all.lineHashes[n - 1]!) };
  }
  const events = read.events;
  const ended = feedStatus(events.at(-1));
  const running = ended === null && !sealed;
  const { level, note } = await viewerLevel(options.policy, record, events[0]);
  verdict ??= uncheckedVerdict(sealed || ended !== null, read.problems);
  if (!verdict.ok && unreadable && verdict.checked) {
    verdict.problems.unshift(
      problem("events.unreadable", "evidence/events.jsonl cannot be read", { file: "events.jsonl" }),
    );
    verdict.kind = "does_not_verify";
  }
  const untrusted = !trusted(verdict) && options.untrusted === true;
  const content = level !== null && (trusted(verdict) || untrusted);
  const shown: (EventItem | null)[] = [];
  for (const event of events) {
    // The events are the model's own: at bodies the items share their data, which nothing here changes.
    shown.push(content ? await shownAt(event, level, { share: true }).catch(() => null) : null);
  }
  const received = content ? await receivedOf(record, { events, level }) : [];
  return {
    record,
    events,
    lineHashes: read.lineHashes,
    lineNumbers: read.eventLines,
    verdict,
    sealed,
    ended,
    running,
    level,
    note,
    untrusted,
    shown,
    received,
  };
}

/**
 * The check of a sealed run, and its events as the check read them when the run's content may be shown: the
 * evidence verifies (all the check could not make is the comparison with what a catalog holds), so each line
 * is its event's canonical form, and the next event's prev is its hash.
 */
async function checkSealed(
  store: EvidenceStore,
  record: RunRecord,
  options: RunModelOptions,
): Promise<{ verdict: ViewVerdict; events: EvidenceEvent[] | null }> {
  let checked: readonly EvidenceEvent[] | null = null;
  const check = await verifyRun(record, {
    store,
    ...(options.catalog ? { catalog: options.catalog } : {}),
    extraChecks: [(_record, events) => {
      checked = events;
      return Promise.resolve([]);
    }],
  });
  const verdict: ViewVerdict = {
    checked: true,
    ok: check.ok,
    kind: verdictKind({ checked: true, ok: check.ok, problems: check.problems }),
    problems: check.problems,
    bundle: check.bundle,
  };
  const events = trusted(verdict) && checked !== null ? [...(checked as EvidenceEvent[])] : null;
  return { verdict, events };
}

/**
 * The verdict of a run that was not checked: one that has ended or was sealed and still has no check has no
 * manifest, so it does not verify; else it is running, with the problems of its events so far.
 */
function uncheckedVerdict(ended: boolean, problems: Problem[]): ViewVerdict {
  return ended
    ? {
      checked: true,
      ok: false,
      kind: "does_not_verify",
      problems: [
        problem("manifest.missing", "evidence/manifest.json is missing: the run was not sealed", {
          file: "manifest.json",
        }),
      ],
      bundle: null,
    }
    : { checked: false, ok: problems.length === 0, kind: "running", problems, bundle: null };
}

/**
 * True when the run's content may be shown as it is: it verifies, or all its check could not make is the
 * comparison with a committed bundle or experiment that this viewer cannot read (its own evidence verifies).
 * A running run's chain so far counts too, as before: the page says it is not sealed.
 */
export function trusted(verdict: Pick<ViewVerdict, "ok" | "kind">): boolean {
  return verdict.ok || verdict.kind === "cannot_check";
}

/** The line of `events.jsonl` that holds an event, from 1. */
export function lineNumber(model: RunModel, index: number): number {
  return model.lineNumbers[index] ?? index + 1;
}

/**
 * The SHA-256 of an event's line: of its bytes as read, or, when the check read the events, the next event's
 * `prev`, which the check found to be it (the last event's line is made again).
 */
export function lineSha256(model: RunModel, index: number): string {
  const read = model.lineHashes[index];
  if (read !== undefined) return read;
  return model.events[index + 1]?.prev ?? sha256Hex(eventLine(model.events[index]!));
}
