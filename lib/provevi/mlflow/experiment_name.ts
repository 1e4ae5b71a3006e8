/**
 * The name of the MLflow experiment that a run's copy goes in, cut to the copy's level.
 * @module
 */
import { sha256Hex } from "../evidence/hash.ts";
import type { Json } from "../evidence/event.ts";
import type { Level } from "../telemetry/attributes.ts";
import { plainName } from "../telemetry/plain_name.ts";

/**
 * The experiment's full name that a run's `run_created` data gives: the run's experiment (`experiment://` URI
 * without the scheme and selector, such as `acme/risk/dev/credit/q`), or else its agent class
 * (`org/domain/env/agent`). Labels name each part, for the cut below `bodies`.
 *
 * @param data The `run_created` event's data.
 * @returns The parts and their labels, or null when the run names neither an experiment nor a whole agent
 *   class.
 */
export function experimentParts(
  data: { [key: string]: Json },
): { parts: string[]; labels: string[] } | null {
  const experiment = typeof data.experiment === "string" ? data.experiment : null;
  if (experiment !== null) {
    const path = experiment.replace(/^experiment:\/\//, "").replace(/[?#].*$/s, "").replace(/\/+$/, "");
    const parts = path.split("/");
    if (parts.length > 0 && parts.every((p) => p !== "")) {
      const labels = parts.map((_, i) =>
        i === 0 ? "org" : i === 1 ? "domain" : i === 2 ? "env" : i === parts.length - 1 ? "name" : "project"
      );
      return { parts, labels };
    }
  }
  const text = (v: Json | undefined) => typeof v === "string" && v !== "" ? v : null;
  const spec = typeof data.spec === "object" && data.spec !== null && !Array.isArray(data.spec)
    ? data.spec
    : {};
  const agent = text(data.agent) ?? text(spec.name);
  const org = text(data.org), domain = text(data.domain), env = text(data.env);
  if (agent === null || org === null || domain === null || env === null) return null;
  return { parts: [org, domain, env, agent], labels: ["org", "domain", "env", "agent"] };
}

/**
 * The name of the MLflow experiment for a run at a level. At `bodies` it is the full name. Below, a part that is
 * not a plain name shows as its label (an agent named with free text shows as `agent`), and a name whose whole
 * looks like a path (`home/someone/.ssh/id_rsa`) shows as its labels and a short hash of it
 * (`org/domain/env/project/name-1a2b3c4d`), so two such experiments stay apart.
 *
 * @param data The `run_created` event's data.
 * @param level The copy's level.
 * @returns The experiment's name, or null when the run names neither an experiment nor an agent class.
 * @example
 * ```ts
 * import { experimentName } from "./experiment_name.ts";
 * experimentName({ org: "acme", domain: "demo", env: "dev", agent: "revenue-question" }, "names");
 * // "acme/demo/dev/revenue-question"
 * ```
 */
export function experimentName(data: { [key: string]: Json }, level: Level): string | null {
  const found = experimentParts(data);
  if (found === null) return null;
  const whole = found.parts.join("/");
  if (level === "bodies") return whole;
  const shown = found.parts.map((part, i) => plainName(part) && !part.includes("/") ? part : found.labels[i]!)
    .join("/");
  if (!plainName(shown, { declared: [shown] })) {
    return `${found.labels.join("/")}-${sha256Hex(whole).slice(0, 8)}`;
  }
  return shown;
}
