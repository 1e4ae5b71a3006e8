/**
 * A row of the runs page at the policy's level: names need `names`, token counts and costs `usage`; and the
 * columns a level hides, which the page shows as hidden, never as absent.
 * @module
 */
import type { RunRow } from "../runs/list_runs.ts";
import type { Level } from "../telemetry/attributes.ts";

/** The columns of the runs page that a level hides: shown as hidden, never as absent. */
export function hiddenAt(level: Level | null): string[] {
  if (level === "usage" || level === "bodies") return [];
  if (level === "names") return ["tokens", "cost"];
  return ["agent", "agent_version", "model", "experiment", "tokens", "cost"];
}

/** A row of the runs page cut to a level: names need `names`, token counts and costs `usage`. */
export function rowAtLevel<R extends RunRow & { cost?: string | null }>(row: R, level: Level | null): R {
  if (level === "usage" || level === "bodies") return row;
  const cut: R = { ...row, tokens: null, ...("cost" in row ? { cost: null } : {}) };
  if (level === "names") return cut;
  return { ...cut, agent: null, agent_version: null, model: null, experiment: null };
}
