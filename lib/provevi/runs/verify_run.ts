/**
 * The whole check of a run: the evidence, then the outputs, then the inputs' re-check, then the committed
 * bundle and the experiment.
 * @module
 */
import { join } from "node:path";
import type { Catalog } from "../../provcat/mod.ts";
import { verifyBundle } from "./bundle.ts";
import { verifyExperiment } from "../experiments/experiment.ts";
import type { RunRecord } from "../evidence/record.ts";
import type { EvidenceStore } from "../store/store.ts";
import { type Check, verifyEvidence, verifyOutputs } from "../evidence/verify.ts";
import { inputProblems } from "../evidence/event_rules.ts";
import { bundleAsked } from "./bundle_asked.ts";
import { checkAttestation } from "../evidence/attestation.ts";
import type { TrustedKey } from "../evidence/signing_key.ts";

/** What {@linkcode verifyRun} may also check against. */
export interface VerifyRunOptions {
  /**
   * Check the run as this store holds it too (an indexed store checks its rows against the files of the
   * folder being verified).
   */
  store?: EvidenceStore;
  /**
   * The catalog that reads the committed bundle and the run's experiment: a Catalog, or a function that opens
   * one, called only when the run has a bundle or names an experiment (and the catalog it opens is closed at
   * the end).
   */
  catalog?: Catalog | (() => Catalog | Promise<Catalog>);
  /** Fail a run that has no committed bundle to compare with. */
  requireBundle?: boolean;
  /** The pinned URI of the bundle, to trust instead of the run folder's `bundle.json`. */
  bundle?: string;
  /**
   * The keys whose signature the run must carry (`prove verify --trust`): then the run's attestation must be
   * signed by one of them. Without any, a signature is reported and not checked.
   */
  trust?: readonly TrustedKey[];
  /** Checks of the bundle and experiment, which the catalog adds; each returns problems. */
  extraChecks?: ((
    record: RunRecord,
    events: ReadonlyArray<import("../evidence/event.ts").EvidenceEvent>,
  ) => Promise<string[]>)[];
}

/** The result of {@linkcode verifyRun}. */
export interface RunCheck extends Check {
  /**
   * What the verdict does not say by itself, and is not a problem: events that lenient mode could not write
   * (the manifest's `lost`), and a signature that was not checked.
   */
  notes: string[];
  /** The IDs of the trusted keys whose signature of the run's attestation verified. */
  signedBy: string[];
  /** The run's ID. */
  runId: string;
  /** The pinned URI of the committed bundle that was compared, or null when there was none. */
  bundle: string | null;
  /** The URI of a bundle committed to a store without commits: reported, not compared. */
  unpinnedBundle: string | null;
}

/**
 * Checks a run: its evidence, then its outputs, then that its inputs did not change during the run.
 *
 * @param record The run, as {@linkcode findRun} or a store gives it.
 * @param options What else to check against.
 * @returns `{ ok, problems, bundle }`; it prints nothing.
 * @example
 * ```ts
 * import { findRun, verifyRun } from "../mod.ts";
 * const check = await verifyRun(await findRun("run-20261031T182026Z-f9c3b25f"));
 * console.log(check.ok, check.problems);
 * ```
 */
export async function verifyRun(record: RunRecord, options: VerifyRunOptions = {}): Promise<RunCheck> {
  const read = await verifyEvidence(record);
  const problems = [...read.problems];
  const notes: string[] = [];
  const complete = read.complete;
  if (record.folder !== null) {
    problems.push(...(await verifyOutputs(record.folder, read.events, { complete })).problems);
  }
  problems.push(...inputProblems(read.events.map((event, i) => ({ event, line: read.eventLines[i]! }))));
  const attestation = await checkAttestation(record, read.events, {
    ...(options.trust ? { trust: options.trust } : {}),
    ...(read.texts ? { texts: read.texts } : {}),
  });
  problems.push(...attestation.problems);
  notes.push(...attestation.notes);
  const lost = lostCount(read.texts?.manifest ?? null);
  if (lost > 0) {
    notes.push(
      `the manifest lists ${lost} event${
        lost === 1 ? "" : "s"
      } that lenient mode could not write (lost); the chain holds the rest`,
    );
  }
  // The store's rows are compared with the folder being verified: on another machine, a copy of the run.
  if (options.store?.checkRun) {
    problems.push(
      ...await options.store.checkRun(record.runId, {
        folder: record.folder,
        bundle: options.bundle ?? null,
      }),
    );
  }
  for (const extra of options.extraChecks ?? []) problems.push(...await extra(record, read.events));
  let bundle: string | null = options.bundle ?? null;
  let unpinnedBundle: string | null = null;
  let bundleFile = false;
  if (bundle === null && record.folder !== null) {
    try {
      const info = await Deno.lstat(join(record.folder, "bundle.json"));
      if (!info.isFile) throw new Error("it is a link or not a plain file");
      bundleFile = true;
      let parsed;
      try {
        parsed = JSON.parse(await Deno.readTextFile(join(record.folder, "bundle.json")));
      } catch (error) {
        throw new Error("it is not JSON", { cause: error });
      }
      bundle = typeof parsed?.pinned === "string" ? parsed.pinned : null;
      if (parsed?.pinned === null && typeof parsed?.uri === "string") unpinnedBundle = parsed.uri;
      else if (bundle === null) problems.push("bundle.json has no pinned URI");
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) {
        problems.push(`bundle.json cannot be read: ${(error as Error).message}`);
      }
    }
  }
  // The run file the evidence records asked for a bundle: deleting bundle.json must not let a forged run pass.
  const asked = bundle === null && !bundleFile && record.folder !== null
    ? await bundleAsked(record, read.events)
    : false;
  if (asked) {
    problems.push(
      "bundle.json is missing, but the run file recorded in run_created asked for a bundle (run.bundle: true); restore it, or pass --bundle URI",
    );
  }
  const catalog = lazyCatalog(options.catalog);
  try {
    if (bundle !== null) {
      const opened = await catalog.get();
      if (opened === null) {
        problems.push(
          `the committed bundle ${bundle} was not compared: no catalog was given to read it; pass a catalog (--config FILE)`,
        );
      } else if (typeof opened === "string") {
        problems.push(`the committed bundle ${bundle} was not compared: ${opened}`);
      } else {
        const given = read.texts ? { read: { events: read.events, texts: read.texts } } : {};
        problems.push(...(await verifyBundle(opened, record, bundle, { complete, ...given })).problems);
      }
    }
    problems.push(
      ...await verifyExperiment(
        options.catalog === undefined ? null : () => catalog.get().then((c) => c!),
        read.events,
      ),
    );
  } finally {
    await catalog.close();
  }
  if (options.requireBundle && bundle === null && !asked) {
    problems.push(
      unpinnedBundle === null
        ? "no committed bundle to compare with, and a bundle is required"
        : `the bundle ${unpinnedBundle} is unpinned (its store has no commits), and a pinned bundle is required`,
    );
  }
  return {
    ok: problems.length === 0,
    // One line each, whatever a message quotes from the files.
    problems: problems.map((p) => p.replace(/\s*\n\s*/g, " ")),
    notes,
    signedBy: attestation.signedBy,
    runId: record.runId,
    bundle,
    unpinnedBundle,
  };
}

/** The length of the manifest's `lost` list, or 0 when the manifest cannot say (the evidence check reports). */
function lostCount(text: string | null): number {
  try {
    const lost = text === null ? null : JSON.parse(text)?.lost;
    return Array.isArray(lost) ? lost.length : 0;
  } catch {
    return 0;
  }
}

/** Opens the catalog once, on first need; gives null without one, or the text of why it cannot be opened. */
function lazyCatalog(given: VerifyRunOptions["catalog"]) {
  let opened: Promise<Catalog | string | null> | null = null;
  let ours = false;
  return {
    get(): Promise<Catalog | string | null> {
      opened ??= (async () => {
        if (given === undefined) return null;
        if (typeof given !== "function") return given;
        try {
          ours = true;
          return await given();
        } catch (error) {
          return `the catalog cannot be opened: ${(error as Error).message}`;
        }
      })();
      return opened;
    },
    async close(): Promise<void> {
      const c = opened === null ? null : await opened;
      if (ours && c !== null && typeof c !== "string") await c.close();
    },
  };
}
