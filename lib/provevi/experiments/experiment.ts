/**
 * Experiments: a question a team asks again and again, kept as `experiment.yaml` in a catalog folder such as
 * `experiment://acme/risk/dev/credit/q`. A commit of the folder is a version, so the folder must be in a store
 * with commits (git, s3).
 *
 * ```yaml
 * kind: agent-eval
 * description: Does a retrieval step raise accuracy on the revenue questions?
 * inputs:
 *   - data+table://acme/risk/dev/evals/revenue
 * metrics: [accuracy]
 * ```
 * @module
 */
import { createHash } from "node:crypto";
import { parse, stringify } from "yaml";
import type { Catalog } from "../../provcat/mod.ts";
import { parseUri } from "../../provcat/uri.ts";
import { childUri, withSelector } from "../../provcat/uri.ts";
import { ProveviError } from "../evidence/errors.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import { type Problem, problem } from "../evidence/problem.ts";

/** The kinds of experiment. */
export const EXPERIMENT_KINDS = ["agent-eval", "ml"] as const;

/** An experiment, as `experiment.yaml` holds it. */
export interface Experiment {
  /** `agent-eval`, an agentic experiment for evals, or `ml`, a machine-learning experiment. */
  kind: typeof EXPERIMENT_KINDS[number];
  /** What the experiment asks; not empty. */
  description: string;
  /** The URIs that every run of the experiment reads. */
  inputs: string[];
  /** The names of the scores or metrics that each run reports. */
  metrics: string[];
}

/** An experiment's version. */
export interface PinnedExperiment {
  /** The experiment's URI, without `?at=`. */
  uri: string;
  /** The URI at its commit: `…?at=commit:<id>`. */
  pin: string;
  /** The SHA-256 of `experiment.yaml`'s bytes. */
  sha256: string;
}

/**
 * An experiment that cannot be read, written or is not valid.
 *
 * @example
 * ```ts
 * import { ExperimentError, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new ExperimentError("experiment.yaml: kind is missing; add kind: agent-eval");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "ExperimentError");
 * ```
 */
export class ExperimentError extends ProveviError {
  /** @param message What is wrong, and the fix. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ExperimentError";
  }
}

const KEYS = ["kind", "description", "inputs", "metrics"];
const METRIC = /^[A-Za-z_][A-Za-z0-9_.\/-]*$/;

/**
 * Every problem of a value as an experiment, empty when it is one.
 *
 * @param value The parsed YAML.
 * @returns One text per problem.
 * @example
 * ```ts
 * import { experimentProblems } from "./experiment.ts";
 * experimentProblems({ kind: "eval", description: "", inputs: "x", metrics: [] });
 * // ['kind is "eval", not agent-eval or ml', "description is empty", "inputs is a text, not a list of URIs"]
 * ```
 */
export function experimentProblems(value: unknown): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return ["experiment.yaml is not a mapping of kind, description, inputs and metrics"];
  }
  const e = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(e)) {
    if (!KEYS.includes(key)) {
      problems.push(`"${key}" is not a key of an experiment (kind, description, inputs, metrics)`);
    }
  }
  if (e.kind === undefined) problems.push("kind is missing (agent-eval or ml)");
  else if (!(EXPERIMENT_KINDS as readonly unknown[]).includes(e.kind)) {
    problems.push(`kind is ${JSON.stringify(e.kind)}, not agent-eval or ml`);
  }
  if (e.description === undefined) problems.push("description is missing");
  else if (typeof e.description !== "string") problems.push("description is not a text");
  else if (e.description.trim() === "") problems.push("description is empty");
  const list = (key: "inputs" | "metrics", what: string, ok: (item: string) => string | null) => {
    const v = e[key];
    if (v === undefined) problems.push(`${key} is missing (a list of ${what}; write ${key}: [] for none)`);
    else if (typeof v === "string") {
      problems.push(`${key} is a text, not a list of ${what}; write it as a list`);
    } else if (!Array.isArray(v)) problems.push(`${key} is not a list of ${what}`);
    else {
      v.forEach((item, i) => {
        const bad = typeof item === "string" ? ok(item) : "is not a text";
        if (bad) problems.push(`${key}[${i}] ${bad}`);
      });
    }
  };
  list("inputs", "URIs", (item) => {
    try {
      parseUri(item);
      return null;
    } catch (error) {
      return `is not a URI: ${(error as Error).message}`;
    }
  });
  list("metrics", "names", (item) => (METRIC.test(item) ? null : `"${item}" is not a name`));
  return problems;
}

/**
 * Parses the text of `experiment.yaml`, refusing it with every problem at once.
 *
 * @param text The file's text.
 * @param where The file's name or URI, for the message.
 * @returns The experiment.
 * @throws ExperimentError listing every problem.
 * @example
 * ```ts
 * import { parseExperiment } from "./experiment.ts";
 * const e = parseExperiment("kind: ml\ndescription: Churn\ninputs: []\nmetrics: [auc]\n");
 * ```
 */
export function parseExperiment(text: string, where = "experiment.yaml"): Experiment {
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    throw new ExperimentError(`${where} is not YAML: ${(error as Error).message.split("\n")[0]}`, {
      cause: error,
    });
  }
  const problems = experimentProblems(value);
  if (problems.length) throw new ExperimentError(`${where} is not an experiment: ${problems.join("; ")}`);
  return value as Experiment;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function refuseUnversioned(catalog: Catalog, uri: string): void {
  if (!catalog.versioned(uri)) {
    throw new ExperimentError(
      `experiment "${uri}" is in store "${
        catalog.route(uri).store.name
      }", which has no commits, so it cannot be pinned; route experiment URIs to a git or s3 store`,
    );
  }
}

/**
 * Writes `experiment.yaml` in the experiment's folder and commits the folder.
 *
 * @param catalog The catalog.
 * @param uri The experiment's URI, such as `experiment://acme/risk/dev/credit/q`, without `?at=`.
 * @param experiment The experiment; checked first.
 * @param message The commit message.
 * @returns The URI, its pin (`?at=commit:…`) and the file's SHA-256.
 * @throws ExperimentError for an invalid experiment or a store without commits.
 * @example
 * ```ts
 * import { Catalog, writeExperiment } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const lake = await Deno.makeTempDir();
 * await new Deno.Command("git", { args: ["init", "-q", "-b", "main", lake] }).output();
 * await using catalog = await Catalog.open({
 *   config: {
 *     cache: `${lake}/.cache`,
 *     stores: { lake: { type: "git", path: lake } },
 *     routes: [{ prefix: "run://acme/demo/dev", store: "lake", path: "runs" }, {
 *       prefix: "experiment://acme/demo/dev", store: "lake", path: "experiments" }],
 *   },
 * });
 * const pinned = await writeExperiment(catalog, "experiment://acme/demo/dev/credit/q", {
 *   kind: "agent-eval",
 *   description: "Does retrieval help?",
 *   inputs: [],
 *   metrics: ["accuracy"],
 * }, "first version");
 * assert.match(pinned.sha256, /^[0-9a-f]{64}$/);
 * ```
 */
export async function writeExperiment(
  catalog: Catalog,
  uri: string,
  experiment: Experiment,
  message: string,
): Promise<PinnedExperiment> {
  const problems = experimentProblems(experiment);
  if (problems.length) throw new ExperimentError(`experiment "${uri}" is not valid: ${problems.join("; ")}`);
  refuseUnversioned(catalog, uri);
  const bytes = new TextEncoder().encode(stringify(experiment));
  await catalog.put(childUri(uri, "experiment.yaml"), bytes);
  const committed = await catalog.commit(uri, message);
  const pin = committed.pinned;
  if (pin === null || parseUri(pin).type !== "logical" || !pin.includes("?at=commit:")) {
    throw new ExperimentError(`experiment "${uri}" was written, but its pin ${pin} names no commit`);
  }
  return { uri, pin, sha256: sha256(bytes) };
}

/**
 * Reads an experiment: the newest version, or the one that the URI's `?at=` names.
 *
 * @param catalog The catalog.
 * @param uri The experiment's URI.
 * @returns The experiment, its URI, its pin and the file's SHA-256.
 * @throws ExperimentError for a store without commits or an invalid file; CatalogNotFound when it is missing.
 * @example
 * ```ts
 * import { Catalog, readExperiment, writeExperiment } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const lake = await Deno.makeTempDir();
 * await new Deno.Command("git", { args: ["init", "-q", "-b", "main", lake] }).output();
 * await using catalog = await Catalog.open({
 *   config: {
 *     cache: `${lake}/.cache`,
 *     stores: { lake: { type: "git", path: lake } },
 *     routes: [{ prefix: "run://acme/demo/dev", store: "lake", path: "runs" }, {
 *       prefix: "experiment://acme/demo/dev", store: "lake", path: "experiments" }],
 *   },
 * });
 * const uri = "experiment://acme/demo/dev/credit/q";
 * await writeExperiment(catalog, uri, {
 *   kind: "agent-eval",
 *   description: "Does retrieval help?",
 *   inputs: [],
 *   metrics: ["accuracy"],
 * }, "first version");
 * const { experiment, pin } = await readExperiment(catalog, uri);
 * assert.equal(experiment.description, "Does retrieval help?");
 * assert.match(pin, /\?at=commit:[0-9a-f]{40}$/);
 * ```
 */
export async function readExperiment(
  catalog: Catalog,
  uri: string,
): Promise<PinnedExperiment & { experiment: Experiment }> {
  refuseUnversioned(catalog, uri);
  const { pinned } = await catalog.pin(uri);
  if (pinned === null || !pinned.includes("?at=commit:")) {
    throw new ExperimentError(`experiment "${uri}" pins to ${pinned}, which names no commit`);
  }
  const bytes = await catalog.read(childUri(pinned, "experiment.yaml"));
  const experiment = parseExperiment(new TextDecoder().decode(bytes), childUri(pinned, "experiment.yaml"));
  return { uri: withSelector(uri, null), pin: pinned, sha256: sha256(bytes), experiment };
}

/**
 * Checks the experiment that a run's `run_created` names: reads `experiment.yaml` at the run's pin and checks
 * its SHA-256. A pin that names no commit does not verify; with no catalog, a run that names an experiment
 * does not verify.
 *
 * @param catalog The catalog, or null when none was given.
 * @param events The run's events.
 * @returns The problems found, each with its code.
 * @example
 * ```ts
 * import { verifyExperiment } from "./experiment.ts";
 * const problems = await verifyExperiment(null, []); // []
 * ```
 */
export async function verifyExperiment(
  catalog: Catalog | null | (() => Promise<Catalog | string>),
  events: ReadonlyArray<EvidenceEvent>,
): Promise<Problem[]> {
  const created = events.find((e) => e.type === "run_created");
  const name = created?.data.experiment;
  if (typeof name !== "string" || name === "") return [];
  const pin = created!.data.experiment_pin;
  const want = created!.data.experiment_sha256;
  if (typeof pin !== "string") {
    return [problem("experiment.no_pin", `run_created names experiment ${name}, but no experiment_pin`)];
  }
  let at;
  try {
    const parsed = parseUri(pin);
    at = parsed.type === "logical" ? parsed.at : null;
  } catch (error) {
    return [problem("experiment.bad_pin", `the experiment pin is not a URI: ${(error as Error).message}`)];
  }
  if (at?.kind !== "commit") {
    return [problem(
      "experiment.bad_pin",
      `the experiment pin ${pin} names no commit, and a branch moves; the experiment cannot be checked`,
    )];
  }
  // The pin must be of the experiment the run names: a pin of another experiment would verify its own file.
  let named: string;
  try {
    named = withSelector(name, null);
  } catch (error) {
    return [
      problem(
        "experiment.bad_pin",
        `run_created names experiment ${name}, which is not a URI: ${(error as Error).message}`,
      ),
    ];
  }
  if (withSelector(pin, null) !== named) {
    return [
      problem(
        "experiment.bad_pin",
        `the experiment pin ${pin} is not of the experiment ${name} that run_created names`,
      ),
    ];
  }
  const opened = typeof catalog === "function" ? await catalog() : catalog;
  if (opened === null) {
    return [problem(
      "catalog.missing",
      `the run names experiment ${pin}, but no catalog was given to read it; pass a catalog (--config FILE)`,
    )];
  }
  if (typeof opened === "string") {
    return [problem("catalog.unopenable", `the experiment ${pin} was not checked: ${opened}`)];
  }
  let bytes: Uint8Array;
  try {
    bytes = await opened.read(childUri(pin, "experiment.yaml"));
  } catch (error) {
    return [
      problem("experiment.unreadable", `the experiment ${pin} cannot be read: ${(error as Error).message}`),
    ];
  }
  const got = sha256(bytes);
  return got === want ? [] : [problem(
    "experiment.hash_mismatch",
    `the experiment ${pin} hashes to ${got}, but run_created records ${JSON.stringify(want)}`,
  )];
}
