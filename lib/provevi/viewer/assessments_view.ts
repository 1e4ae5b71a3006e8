/**
 * Assessments as the viewer shows them: a run's, and an experiment's on its page, cut to the live level as the
 * copy in MLflow cuts them.
 * @module
 */
import type { Assessment } from "../store/assess.ts";
import type { Level } from "../telemetry/attributes.ts";
import { plainName } from "../telemetry/plain_name.ts";

/**
 * Assessments cut to the level: below `bodies` a name that is not plain stays out, a source that is not plain
 * shows as provevi, a value shows at `names` when it is a name or a yes or no and at `usage` when it is a number
 * too, and a rationale shows only at `bodies`; with no live viewer, only what each judges and when.
 *
 * @param all The assessments, as the store gives them.
 * @param level The viewer's level, or null.
 * @returns Each as it may show.
 */
export function assessmentsAt(all: readonly Assessment[], level: Level | null): Partial<Assessment>[] {
  if (level === "bodies") return [...all];
  return all.flatMap((a) => {
    const base = {
      id: a.id,
      seq: a.seq,
      span_id: a.span_id,
      experiment: a.experiment,
      created_at: a.created_at,
    };
    if (level === null) return [base];
    if (!plainName(a.name)) return [];
    const value = typeof a.value === "boolean" || (typeof a.value === "string" && plainName(a.value)) ||
        (level === "usage" && typeof a.value === "number")
      ? a.value
      : undefined;
    return [{
      ...base,
      name: a.name,
      source: a.source !== null && plainName(a.source) ? a.source : "provevi",
      ...(value !== undefined ? { value } : {}),
    }];
  });
}
