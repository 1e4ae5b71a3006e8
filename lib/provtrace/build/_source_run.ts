/**
 * A run read from its store for the trace database: sealed or not, checked with provevi's `verifyRun`, its
 * last line held to the manifest's last hash, and mapped to rows. The build adds what this gives; `check` and
 * the exports build the same rows again from the same evidence, to compare with the file.
 * @module
 */
import { parseWeighed } from "../../provevi/evidence/json_depth.ts";
import { Catalog } from "../../provcat/mod.ts";
import type { Assessment, EvidenceEvent, EvidenceStore } from "../../provevi/mod.ts";
import { NeedsIndexedStore, ProveviError } from "../../provevi/evidence/mod.ts";
import { verifyRun } from "../../provevi/runs/mod.ts";
import { experimentOfRun } from "../../provevi/store/mod.ts";
import { readEventsText, sha256Hex } from "../../provevi/evidence/mod.ts";
import { TRACE_BUILD_VERSION } from "../db/mod.ts";
import { runRows, type TraceRow, type TraceRunRows } from "./run_rows.ts";
import { readOnceRecord } from "./_read_once_record.ts";

/** How {@linkcode sourceRun} reads a run. */
export interface SourceRunOptions {
  /** The catalog that reads a run's committed bundle and experiment, as `verifyRun` takes it. */
  catalog?: Catalog | (() => Catalog | Promise<Catalog>);
  /** Map a run that does not verify too (its problems go with it); else it is refused. */
  allowUnverified?: boolean;
}

/** A catalog config file and tenant, as `Catalog.open` takes them: what a worker can be sent of a catalog. */
export interface CatalogChoice {
  configPath?: string;
  tenant?: string;
}

/** Opens the catalog `choice` names, for `verifyRun` to call for each run that needs one (and close). */
export function catalogOpener(choice: CatalogChoice): () => Promise<Catalog> {
  return () =>
    Catalog.open({
      ...(choice.configPath === undefined ? {} : { configPath: choice.configPath }),
      ...(choice.tenant === undefined ? {} : { tenant: choice.tenant }),
    });
}

/** A run read from its store: not sealed, refused with why, or its rows. */
export type SourceRun =
  | { kind: "open" }
  | { kind: "refused"; problems: string[] }
  | {
    kind: "ready";
    /** Its `trace_sources` row. */
    source: TraceRow;
    rows: TraceRunRows;
    /** The last hash the rows were made from. */
    lastHash: string;
    /** The SHA-256 of the manifest they were made from. */
    manifestSha256: string;
    /** Why it does not verify; empty when it does. */
    problems: string[];
  };

/**
 * Reads, verifies and maps one run of a store.
 *
 * @param store The store, open to read.
 * @param runId The run.
 * @param options The catalog, and whether a run that does not verify is mapped anyway.
 * @returns What the run gives.
 * @throws RunNotFound for a run the store lacks; ProveviError when the store cannot be read.
 * @example
 * ```ts
 * import { openStore } from "../../provevi/mod.ts";
 * import { sourceRun } from "./_source_run.ts";
 * await using store = await openStore("file", { readOnly: true, runs: "fixtures/runs" });
 * const run = await sourceRun(store, "run-20261129T120000Z-0badc0de");
 * ```
 */
export async function sourceRun(
  store: EvidenceStore,
  runId: string,
  options: SourceRunOptions = {},
): Promise<SourceRun> {
  // The rows are made from the texts and bytes the check read, each file read once.
  const record = readOnceRecord(await store.readRun(runId));
  if ((await record.manifestText()) === null) return { kind: "open" };
  const verified: { events: readonly EvidenceEvent[] | null } = { events: null };
  const check = await verifyRun(record, {
    store,
    ...(options.catalog === undefined ? {} : { catalog: options.catalog }),
    // The events the check read and chained: the rows are made from them, not from a second parse.
    extraChecks: [(_record, events) => {
      verified.events = events;
      return Promise.resolve([]);
    }],
  });
  // The trace database keeps the verdict's words for a person; what it acts on is check.ok.
  const messages = check.problems.map((p) => p.message);
  if (!check.ok && !options.allowUnverified) return { kind: "refused", problems: messages };
  const refused = (problems: string[]): SourceRun => ({ kind: "refused", problems });
  const text = await record.eventsText();
  const manifestText = await record.manifestText();
  if (text === null || manifestText === null) {
    return refused(["the run's evidence went missing while it was read"]);
  }
  const lastHash = manifestLastHash(manifestText);
  const read = (check.ok ? chainedRead(text, verified.events, lastHash) : null) ?? readEventsText(text);
  const lastLine = read.lines.at(-1);
  const lastLineHash = read.lineHashes.at(-1);
  if (check.ok && (lastLineHash === undefined || lastLineHash !== lastHash)) {
    return refused([
      "the run changed while it was read (its last line no longer has the manifest's last hash)",
    ]);
  }
  if (!read.events.length) return refused([...messages, "the run has no events to build rows from"]);
  const assessments = [
    ...await assessmentsOf(store, record.runId),
    ...await experimentAssessmentsOf(store, read.events[0]!),
  ];
  let rows: TraceRunRows;
  try {
    rows = await runRows({
      events: read.events,
      lines: read.lines,
      lineHashes: read.lineHashes,
      payload: (sha) => record.payload(sha),
      assessments,
    });
  } catch (error) {
    if (error instanceof ProveviError) return refused([...messages, error.message]);
    throw error;
  }
  const built = lastHash ?? lastLineHash ?? sha256Hex(lastLine ?? "");
  const source: TraceRow = {
    run_id: record.runId,
    store_uri: store.uri,
    runs_root: store.runsRoot,
    last_hash: built,
    build_version: TRACE_BUILD_VERSION,
    built_at: new Date().toISOString(),
    verified: check.ok ? 1 : 0,
    problems: JSON.stringify(messages),
  };
  return {
    kind: "ready",
    source,
    rows,
    lastHash: built,
    manifestSha256: sha256Hex(manifestText),
    problems: messages,
  };
}

/** The manifest's last hash, or null (a manifest that is not JSON is one of the check's problems). */
function manifestLastHash(manifestText: string): string | null {
  try {
    return (parseWeighed(manifestText) as { last_hash?: string | null }).last_hash ?? null;
  } catch {
    return null;
  }
}

/**
 * The lines of a run that verified, with the events the check parsed from them and each line's hash from the
 * chain the check held: each event's `prev` is the hash of the line before it, and the manifest's last hash is
 * the last line's. Null when the text is not one event a line, so it is read again in full.
 */
function chainedRead(
  text: string,
  events: readonly EvidenceEvent[] | null,
  lastHash: string | null,
): { events: EvidenceEvent[]; lines: string[]; lineHashes: string[] } | null {
  const lines = text.split("\n");
  if (!events?.length || lastHash === null || lines.pop() !== "" || lines.length !== events.length) {
    return null;
  }
  const lineHashes: string[] = [];
  for (let i = 1; i < events.length; i++) {
    const prev = events[i]!.prev;
    if (typeof prev !== "string") return null;
    lineHashes.push(prev);
  }
  lineHashes.push(lastHash);
  return { events: [...events], lines, lineHashes };
}

/**
 * The assessments of the run's experiment that judge the run: those of the experiment as a whole, and of the
 * version the run pinned (not of another version). None from a store that keeps no experiment's.
 */
async function experimentAssessmentsOf(store: EvidenceStore, created: EvidenceEvent): Promise<Assessment[]> {
  const named = created.type === "run_created" ? experimentOfRun(created) : null;
  const questions = store as Partial<{ experimentAssessments(uri: string): Promise<Assessment[]> }>;
  if (named === null || typeof questions.experimentAssessments !== "function") return [];
  try {
    const all = await questions.experimentAssessments.call(store, named.experiment);
    return all.filter((a) =>
      a.experiment === named.experiment || (named.pin !== null && a.experiment === named.pin)
    );
  } catch (error) {
    if (error instanceof NeedsIndexedStore) return []; // the file store keeps no experiment's assessments
    throw error;
  }
}

async function assessmentsOf(store: EvidenceStore, runId: string): Promise<Assessment[]> {
  const questions = store as Partial<{ assessments(id: string): Promise<Assessment[]> }>;
  if (typeof questions.assessments !== "function") return [];
  try {
    return await questions.assessments.call(store, runId);
  } catch (error) {
    if (error instanceof NeedsIndexedStore) return []; // the file store keeps no assessments
    throw error;
  }
}
