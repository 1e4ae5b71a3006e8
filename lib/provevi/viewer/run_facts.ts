/**
 * The facts at the top of a run page, and why a run failed. The facts are names (the agent, its version, the
 * model, the backend, the experiment), shown from `names` when each is a plain name, as the runs page shows
 * them; below that the page says they are hidden rather than absent. A failed run's reason is its last event's
 * error class (from `names`, when plain) and message (at `bodies`).
 * @module
 */
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import type { EventItem } from "../live/live.ts";
import type { Level } from "../telemetry/attributes.ts";
import { plainExperiment, plainName } from "../telemetry/plain_name.ts";

/** The run's names; null where the run has none. */
export interface RunFacts {
  agent: string | null;
  agent_version: string | null;
  model: string | null;
  backend: string | null;
  experiment: string | null;
  /** The facts the level hides (shown as "hidden", not as absent). */
  hidden: (keyof Omit<RunFacts, "hidden">)[];
}

/** Why a run failed, as far as the level shows it. */
export interface RunFailure {
  seq: number;
  /** The error's class (`ProveviError`, `CancelledError`, …), from `names`. */
  error: string | null;
  /** Its message, at `bodies`. */
  message: string | null;
  cancelled: boolean;
}

const FACT_KEYS = ["agent", "agent_version", "model", "backend", "experiment"] as const;

/**
 * The facts of a run from its `run_created` event.
 *
 * @param first The run's first event.
 * @param level The viewer's level for the run.
 * @returns The facts, and which of them the level hides.
 * @example
 * ```ts
 * import { factsOf } from "./run_facts.ts";
 * factsOf(undefined, "names").agent; // null
 * ```
 */
export function factsOf(first: EvidenceEvent | undefined, level: Level | null): RunFacts {
  const data = first?.type === "run_created" ? first.data : {};
  const facts: RunFacts = {
    agent: null,
    agent_version: null,
    model: null,
    backend: null,
    experiment: null,
    hidden: [],
  };
  const agentName = [data.org, data.domain, data.env, data.agent].every((v) => typeof v === "string")
    ? [data.org, data.domain, data.env, data.agent].join("/")
    : null;
  const values: Record<(typeof FACT_KEYS)[number], Json | undefined> = {
    agent: agentName,
    agent_version: data.agent_version,
    model: data.model,
    backend: data.backend,
    experiment: data.experiment_pin ?? data.experiment,
  };
  for (const key of FACT_KEYS) {
    const value = values[key];
    if (typeof value !== "string" || value === "") continue;
    const plain = key === "experiment"
      ? plainExperiment(value)
      : key === "agent"
      ? value.split("/").every((part) => plainName(part))
      : plainName(value);
    if (level === "bodies" || (level !== null && plain)) facts[key] = value;
    else facts.hidden.push(key);
  }
  return facts;
}

/**
 * Why the run failed: its `run_failed` event, at the level.
 *
 * @param events The run's events.
 * @param shown Each event's content at the level, by index.
 * @param level The viewer's level.
 * @returns The failure, or null when the run did not fail.
 */
export function failureOf(
  events: readonly EvidenceEvent[],
  shown: readonly (EventItem | null)[],
  level: Level | null,
): RunFailure | null {
  const last = events.at(-1);
  if (last?.type !== "run_failed") return null;
  const error = typeof last.data.error === "string" ? last.data.error : null;
  const message = shown.at(-1)?.data?.message;
  return {
    seq: last.seq,
    error: level === "bodies" || (level !== null && error !== null && plainName(error)) ? error : null,
    message: level === "bodies" && typeof message === "string" ? message.slice(0, 2000) : null,
    cancelled: error === "CancelledError",
  };
}
