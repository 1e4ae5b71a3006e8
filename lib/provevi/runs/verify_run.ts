/**
 * The whole check of a run: the evidence, then the outputs, then the inputs' re-check, the recorded costs, then
 * the committed bundle and the experiment.
 * @module
 */
import type { Catalog } from "../../provcat/mod.ts";
import { parseUri } from "../../provcat/uri.ts";
import { verifyBundle } from "./bundle.ts";
import { verifyExperiment } from "../experiments/experiment.ts";
import type { RunRecord } from "../evidence/record.ts";
import type { EvidenceStore } from "../store/store.ts";
import type { ReadEvents } from "../evidence/read_events.ts";
import { type Check, verifyEvidence, verifyOutputs } from "../evidence/verify.ts";
import { inputProblems, outputRecordProblems } from "../evidence/event_rules.ts";
import { type Problem, problem } from "../evidence/problem.ts";
import { bundleAsked } from "./bundle_asked.ts";
import { bundlePin } from "./bundle_pin.ts";
import { signingAskedProblems } from "./signing_asked.ts";
import { resumedPairProblems } from "./resumed_pair.ts";
import { checkAttestation } from "../evidence/attestation_check.ts";
import { checkAssessmentsFile } from "../evidence/assessments_file.ts";
import { manifestLastHash } from "../evidence/manifest.ts";
import type { TrustedKey } from "../evidence/signing_key.ts";
import { runCost } from "../cost/run_cost.ts";
import { checkRunInLog, type InLog, readRunLogFiles } from "../log/run_in_log.ts";
import type { TrustPolicy } from "../log/trust_policy.ts";

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
  /**
   * The log keys, witnesses and quorum that the run's `log.tlog-proof` must satisfy (`prove verify --log-key`,
   * check 10): then the run must be in a log a key signs, cosigned by the quorum. Without it the proof is not read.
   */
  log?: TrustPolicy;
  /** Checks of the bundle and experiment, which the catalog adds; each returns problems. */
  extraChecks?: ((
    record: RunRecord,
    events: ReadonlyArray<import("../evidence/event.ts").EvidenceEvent>,
  ) => Promise<Problem[]>)[];
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
  /** Where the run is in the log, when a log policy was given and the proof holds; else null. */
  inLog: InLog | null;
}

/**
 * Checks a run: its evidence, then its outputs, then that its inputs did not change during the run.
 *
 * @param record The run, as {@linkcode findRun} or a store gives it.
 * @param options What else to check against.
 * @returns `{ ok, problems, bundle }`; it prints nothing.
 * @example
 * ```ts
 * import { findRun, verifyRun } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const check = await verifyRun(await findRun("fixtures/runs/run-20261129T120000Z-0badc0de"));
 * assert.equal(check.ok, true);
 * assert.deepEqual(check.problems, []);
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
  const numbered = read.events.map((event, i) => ({ event, line: read.eventLines[i]! }));
  problems.push(...outputRecordProblems(numbered), ...inputProblems(numbered));
  // The recorded costs, recomputed from the usage and the price table the run pinned.
  problems.push(...(await runCost(read.events, (sha) => record.payload(sha))).problems);
  const attestation = await checkAttestation(record, read.events, {
    ...(options.trust ? { trust: options.trust } : {}),
    ...(read.texts ? { texts: read.texts } : {}),
  });
  problems.push(...await signingAskedProblems(record, read.events), ...attestation.problems);
  notes.push(...attestation.notes);
  problems.push(...await assessmentProblems(record, read));
  const inLog = options.log
    ? await logCheck(record, read.texts?.manifest ?? null, options.log, problems)
    : null;
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
        // the folder's files as read above, when the record read them there: compared as they are, not read and
        // parsed again
        ...(record.readsFolder === true ? { read } : {}),
      }),
    );
  }
  for (const extra of options.extraChecks ?? []) problems.push(...await extra(record, read.events));
  // A resumed run and the cut run it goes on from are one history, checked together.
  problems.push(
    ...await resumedPairProblems(record, { events: read.events, lines: read.eventLines }, options.store),
  );
  const catalog = lazyCatalog(options.catalog);
  let bundles: BundleVerdict;
  try {
    bundles = await checkBundle(record, read, { options, catalog });
    problems.push(...bundles.problems);
    problems.push(
      ...await verifyExperiment(
        options.catalog === undefined ? null : () => catalog.get().then((c) => c!),
        read.events,
      ),
    );
  } finally {
    await catalog.close();
  }
  return {
    ok: problems.length === 0,
    problems,
    notes,
    signedBy: attestation.signedBy,
    runId: record.runId,
    bundle: bundles.bundle,
    unpinnedBundle: bundles.unpinnedBundle,
    inLog,
  };
}

/** Check 10: the run's `log.tlog-proof` against the log policy; its problems go in `problems`. */
async function logCheck(
  record: RunRecord,
  manifestText: string | null,
  policy: TrustPolicy,
  problems: Problem[],
): Promise<InLog | null> {
  const files = record.folder === null
    ? { attestation: null, proofText: null }
    : await readRunLogFiles(record.folder);
  const checked = checkRunInLog({ runId: record.runId, manifestText, ...files }, policy);
  problems.push(...checked.problems);
  return checked.inLog;
}

interface BundleVerdict {
  bundle: string | null;
  unpinnedBundle: string | null;
  problems: Problem[];
}

/**
 * Check 8: the bundle that `bundle.json` (or `--bundle`) names, compared with the run when pinned, and asked of
 * the catalog when unpinned (`pinned: null` says that its store has no commits, which the catalog must bear
 * out); `bundle.json` present when the record asked for a bundle; a bundle when one is required.
 */
async function checkBundle(
  record: RunRecord,
  read: ReadEvents,
  context: { options: VerifyRunOptions; catalog: ReturnType<typeof lazyCatalog> },
): Promise<BundleVerdict> {
  const { options, catalog } = context;
  const file = options.bundle === undefined && record.folder !== null ? await bundlePin(record.folder) : null;
  const problems: Problem[] = [...(file?.problems ?? [])];
  const bundle = options.bundle ?? file?.pinned ?? null;
  const unpinnedBundle = file !== null && file.pinned === null && file.problems.length === 0
    ? file.uri
    : null;
  // The run file the evidence records asked for a bundle: deleting bundle.json must not let a forged run pass.
  const asked = await bundleAsked(record, read.events);
  problems.push(...asked.problems);
  const missing = asked.asked && options.bundle === undefined && record.folder !== null && file === null;
  if (missing) {
    problems.push(problem(
      "bundle.missing",
      "bundle.json is missing, but the run file recorded in run_created asked for a bundle (run.bundle: true); restore it, or pass --bundle URI",
      { file: "bundle.json" },
    ));
  }
  const opened = bundle !== null || unpinnedBundle !== null ? await catalog.get() : null;
  // The bundle named by bundle.json is that file's problem; one named by --bundle is no file's.
  const where = options.bundle === undefined ? { file: "bundle.json" } : {};
  const unread = (what: string) =>
    opened === null
      ? problem(
        "catalog.missing",
        `${what} was not compared: no catalog was given to read it; pass a catalog (--config FILE)`,
        where,
      )
      : problem("catalog.unopenable", `${what} was not compared: ${opened as string}`, where);
  if (bundle !== null) {
    if (opened === null || typeof opened === "string") {
      problems.push(unread(`the committed bundle ${bundle}`));
    } else {
      const given = read.texts ? { read: { events: read.events, texts: read.texts } } : {};
      const complete = read.complete;
      problems.push(...(await verifyBundle(opened, record, bundle, { complete, ...given })).problems);
    }
  } else if (unpinnedBundle !== null) {
    if (opened === null || typeof opened === "string") {
      problems.push(unread(`whether the store of the unpinned bundle ${unpinnedBundle} has commits`));
    } else problems.push(...unpinnedProblems(opened, unpinnedBundle, record.runId));
  }
  if (options.requireBundle && bundle === null && !missing) {
    problems.push(problem(
      "bundle.required",
      unpinnedBundle === null
        ? "no committed bundle to compare with, and a bundle is required"
        : `the bundle ${unpinnedBundle} is unpinned (its store has no commits), and a pinned bundle is required`,
      { file: "bundle.json" },
    ));
  }
  return { bundle, unpinnedBundle, problems };
}

/**
 * `pinned: null` claims that the bundle's store has no commits: the URI must be of this run, and the catalog
 * must route it to a store without commits. A store with commits would have given a pin to compare.
 */
function unpinnedProblems(catalog: Catalog, uri: string, runId: string): Problem[] {
  const at = { file: "bundle.json" };
  let parsed: ReturnType<typeof parseUri> | null = null;
  try {
    parsed = parseUri(uri);
  } catch { /* reported below */ }
  if (parsed === null || parsed.type !== "logical" || parsed.at || parsed.path.at(-1) !== runId) {
    return [
      problem("bundle.other_run", `bundle.json names ${uri}, which is not the bundle of run "${runId}"`, at),
    ];
  }
  try {
    if (catalog.versioned(uri)) {
      return [problem(
        "bundle.unpinned_versioned",
        `bundle.json has pinned null for ${uri}, but the catalog's store for it has commits: a bundle committed there has a pin to compare`,
        at,
      )];
    }
  } catch (error) {
    return [
      problem(
        "bundle.unreachable",
        `the unpinned bundle ${uri} cannot be routed: ${(error as Error).message}`,
        at,
      ),
    ];
  }
  return [];
}

/** Check 11: the file store's assessments of the run, chained from its seal (none for a run without a folder). */
async function assessmentProblems(record: RunRecord, read: ReadEvents): Promise<Problem[]> {
  if (record.folder === null) return [];
  const { problems } = await checkAssessmentsFile(record.folder, {
    runId: record.runId,
    lastHash: manifestLastHash(read.texts?.manifest ?? null),
    seqs: new Set(read.events.map((e) => e.seq)),
    spans: new Set(read.events.map((e) => e.span_id).filter((s): s is string => s !== null)),
  });
  return problems;
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
