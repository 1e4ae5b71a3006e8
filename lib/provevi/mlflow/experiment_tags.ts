/**
 * An experiment's assessments in its copy in MLflow. MLflow judges traces and spans, not experiments, so the
 * copy writes each of the experiment's assessments as a tag of the MLflow experiment the run is copied into,
 * `provevi.assessment.<id>`, whose value is the assessment as JSON; a copy again writes the same tags. They are
 * cut by level as the run's own assessments are.
 * @module
 */
import canonicalize from "canonicalize";
import type { Json } from "../evidence/event.ts";
import type { Assessment } from "../store/assess.ts";
import { type Level, levelRank } from "../telemetry/attributes.ts";
import { plainName } from "../telemetry/plain_name.ts";

/** The start of the key of an experiment's assessment as an MLflow experiment tag. */
export const ASSESSMENT_TAG = "provevi.assessment.";

/** MLflow refuses an experiment tag's value longer than this. */
const MAX_VALUE = 5000;

/**
 * The tags of an experiment's assessments at a level: below `bodies` a name that is not plain stays out, a
 * source that is not plain shows as provevi, a value goes at `names` when it is a yes or no or a plain name and at
 * `usage` when it is a number too, and the rationale goes only at `bodies` (cut to fit MLflow's limit).
 *
 * @param assessments The experiment's assessments, as the store gives them.
 * @param level The destination's level.
 * @returns Each tag's key and value.
 * @example
 * ```ts
 * import { experimentAssessmentTags } from "./experiment_tags.ts";
 * experimentAssessmentTags([], "usage"); // {}
 * ```
 */
export function experimentAssessmentTags(
  assessments: readonly Assessment[],
  level: Level,
): Record<string, string> {
  const rank = levelRank(level);
  const tags: Record<string, string> = {};
  for (const a of assessments) {
    if (a.experiment === null) continue;
    if (rank < 2 && !plainName(a.name)) continue;
    const value = a.value as Json;
    const allowed = rank === 2 || typeof value === "boolean" ||
      (typeof value === "string" && plainName(value)) ||
      (rank >= 1 && typeof value === "number" && Number.isFinite(value));
    if (!allowed) continue;
    const tag = {
      name: a.name,
      value,
      // The version it judges, or null for the experiment as a whole.
      version: a.experiment.includes("?") ? a.experiment : null,
      source: a.source !== null && (rank === 2 || plainName(a.source)) ? a.source : "provevi",
      rationale: rank === 2 ? a.rationale : null,
      created_at: a.created_at,
    };
    let text = canonicalize(tag)!;
    // A long rationale is cut to fit (escapes make a text longer in JSON, so the cut is checked again).
    for (let keep = tag.rationale?.length ?? 0; text.length > MAX_VALUE && keep > 0;) {
      keep = Math.max(0, keep - (text.length - MAX_VALUE) - 1);
      text = canonicalize({ ...tag, rationale: `${tag.rationale!.slice(0, keep)}…` })!;
    }
    if (text.length > MAX_VALUE) continue; // a value too large for a tag at all: the store keeps it
    tags[`${ASSESSMENT_TAG}${a.id}`] = text;
  }
  return tags;
}
