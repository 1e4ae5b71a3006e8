/**
 * What the viewer may show of one run: the level of the policy's `live` destination, narrowed by the run
 * file's `telemetry` section (read from the run's `run_created` payload), exactly as for the live feed; and,
 * when it shows less than everything, which policy line would show more.
 * @module
 */
import { parse } from "yaml";
import type { EvidenceEvent } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";
import type { Level } from "../telemetry/attributes.ts";
import type { TelemetryPolicy } from "../telemetry/policy.ts";

/** The level the viewer shows a run at, and why. */
export interface ViewerLevel {
  /** The level, or null: then only the run's structure shows. */
  level: Level | null;
  /** One sentence for the page when the level is below `bodies`: what is hidden and which line would show it. */
  note: string | null;
}

/**
 * The viewer's level for a run.
 *
 * @param policy The viewer's telemetry policy.
 * @param record The run, to read its run file from the `run_created` payload.
 * @param first The run's first event, when it has been read.
 * @returns The level and the note for the page.
 * @example
 * ```ts
 * import { viewerLevel } from "./viewer_level.ts";
 * // (await viewerLevel(policy, record, events[0])).level → "names"
 * ```
 */
export async function viewerLevel(
  policy: TelemetryPolicy,
  record: RunRecord,
  first: EvidenceEvent | undefined,
): Promise<ViewerLevel> {
  const live = policy.destinations.find((d) => d.kind === "live");
  if (!live) {
    return {
      level: null,
      note:
        `No content is shown, only each event's type, time, status and hashes: the telemetry policy (${policy.source}) ` +
        `names no live viewer. A destination such as "browser: { kind: live, receives: bodies }" under ` +
        `"destinations:" in the policy given with --policy would show more.`,
    };
  }
  let section: unknown = undefined;
  if (first?.type === "run_created" && first.payload) {
    try {
      const text = new TextDecoder().decode(await record.payload(first.payload));
      const parsed = parse(text) as { telemetry?: unknown } | null;
      section = parsed?.telemetry;
    } catch { /* no run file to read: the policy's own level holds */ }
  }
  let level: Level | null = live.receives;
  let narrowed = false;
  if (section !== undefined && section !== null) {
    try {
      level = policy.narrow(section).liveLevel();
      narrowed = level !== live.receives;
    } catch (error) {
      return {
        level: null,
        note: `No content is shown: the run file's telemetry section cannot narrow the policy (${
          (error as Error).message
        }).`,
      };
    }
  }
  if (level === "bodies") return { level, note: null };
  const by = narrowed
    ? `the run file's telemetry section lowers the live destination "${live.name}" to ${level ?? "nothing"}`
    : `the policy's live destination "${live.name}" receives ${level}`;
  return {
    level,
    note: level === null
      ? `No content is shown, only each event's structure: ${by}.`
      : `Shown at ${level}: ${by}; payloads, answers and free text need "receives: bodies"${
        narrowed ? " in both the policy and the run file" : ` on "${live.name}"`
      }.`,
  };
}
