/**
 * The compare page's data: the two runs' sides (as `compareRuns` gives them, with their calls, tokens, cost and
 * errors), their steps paired with the first divergence marked (`step_diff.ts`), their agents' specs as a
 * diff, key by key: two versions of an agent compared by a run of each, and `prove diff`'s alignment of the two
 * (`compare_diff.ts`).
 * @module
 */
import type { Json } from "../evidence/event.ts";
import type { EvidenceStore } from "../store/store.ts";
import { type CompareSide, sideOf } from "./compare_side.ts";
import { runModel, type RunModelOptions } from "./run_model.ts";
import { pageOf } from "./run_page.ts";
import { diffSteps, type StepDiff, stepsOf } from "./step_diff.ts";
import { type CompareDiff, compareDiff } from "./compare_diff.ts";
import type { Level } from "../telemetry/attributes.ts";

/** One key of two specs: its value in each (null where a spec lacks it), and whether they differ. */
export interface SpecRow {
  path: string;
  a: string | null;
  b: string | null;
  differs: boolean;
}

/** The compare page's data. */
export interface CompareView {
  sides: CompareSide[];
  steps: StepDiff;
  /** The two agents' specs, key by key, or null when the level shows neither. */
  spec: SpecRow[] | null;
  /** The two runs aligned as `prove diff` aligns them: the setup, each model step with its tool calls, the end. */
  diff: CompareDiff;
}

/** The most keys of a spec listed, and the characters of a value. */
const SPEC = { keys: 400, chars: 600 } as const;

/** A spec as its keys' paths and values: `tools[0].name` → `read_file`. */
export function flatten(
  value: Json | undefined,
  prefix = "",
  out = new Map<string, string>(),
): Map<string, string> {
  if (out.size >= SPEC.keys) return out;
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value)
      ? value.map((v, i) => [`[${i}]`, v] as const)
      : Object.entries(value);
    if (!entries.length) out.set(prefix || "(empty)", Array.isArray(value) ? "[]" : "{}");
    for (const [key, v] of entries) {
      const path = key.startsWith("[") ? prefix + key : prefix ? `${prefix}.${key}` : key;
      flatten(v, path, out);
    }
    return out;
  }
  if (value !== undefined) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    out.set(prefix, text.length > SPEC.chars ? text.slice(0, SPEC.chars) + "…" : text);
  }
  return out;
}

function specDiff(a: Json | undefined, b: Json | undefined): SpecRow[] | null {
  if (a === undefined && b === undefined) return null;
  const fa = flatten(a), fb = flatten(b);
  const paths = [...new Set([...fa.keys(), ...fb.keys()])].sort();
  return paths.map((path) => {
    const va = fa.get(path) ?? null, vb = fb.get(path) ?? null;
    return { path, a: va, b: vb, differs: va !== vb };
  });
}

/**
 * The compare page's data for two runs.
 *
 * @param store The store.
 * @param runIds The two runs.
 * @param options The policy and catalog, as for the run page (never the unverified content).
 * @returns The sides, the paired steps and the specs' diff.
 * @throws RunNotFound when the store has no such run.
 */
export async function compareView(
  store: EvidenceStore,
  runIds: readonly string[],
  options: Pick<RunModelOptions, "policy" | "catalog">,
): Promise<CompareView> {
  const sides: CompareSide[] = [];
  const steps = [];
  const specs: (Json | undefined)[] = [];
  const levels: (Level | null)[] = [];
  for (const id of runIds) {
    const model = await runModel(store, await store.readRun(id), {
      policy: options.policy,
      ...(options.catalog ? { catalog: options.catalog } : {}),
    });
    sides.push(sideOf(await pageOf(store, model, { spansLimit: 1 })));
    steps.push(stepsOf(model.events, model.shown, model.shown[0] ? model.level : null));
    specs.push(model.shown[0]?.data?.spec);
    levels.push(model.level);
  }
  return {
    sides,
    steps: diffSteps(steps[0] ?? [], steps[1] ?? []),
    spec: specDiff(specs[0], specs[1]),
    diff: await compareDiff(store, runIds, levels),
  };
}
