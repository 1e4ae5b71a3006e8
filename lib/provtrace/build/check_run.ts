/**
 * The check of one run of a trace database against the evidence it came from: the store still holds the run,
 * its lines still chain to the last hash the build read, it still verifies (if it did at the build), and the
 * file's rows of the run are exactly the rows that its evidence gives (built again in memory and compared row
 * by row, so a row changed, added or removed in any table is named). `checkTrace` runs it on every run, and
 * every export on each run it writes.
 * @module
 */
import { parseWeighed } from "../../provevi/evidence/json_depth.ts";
import type { DatabaseSync } from "node:sqlite";
import type { Catalog } from "../../provcat/mod.ts";
import type { EvidenceStore } from "../../provevi/mod.ts";
import { ProveviError, RunNotFound } from "../../provevi/evidence/mod.ts";
import { sha256Hex } from "../../provevi/evidence/mod.ts";
import {
  memoryTraceDb,
  rowDifference,
  rowsMacHolds,
  TRACE_BUILD_VERSION,
  type TraceRunDigest,
  traceRunDigest,
  type TraceRunTables,
} from "../db/mod.ts";
import { RowWriter } from "./_row_writer.ts";
import { sourceRun } from "./_source_run.ts";
import { chainBreak } from "./_chain_break.ts";
import type { RowsHasher } from "./_rows_hasher.ts";
export { chainBreak } from "./_chain_break.ts";

/** How one run compares with its source. */
export interface TraceSourceCheck {
  run_id: string;
  store_uri: string;
  /**
   * `same`; `changed` (the store's run has another last hash, or its lines no longer chain to it); `rows` (the
   * file's rows differ from what the run's evidence gives); `unverified` (built verified, and it does not
   * verify now); `missing` (the store has no such run); `unreadable`.
   */
  state: "same" | "changed" | "rows" | "unverified" | "missing" | "unreadable";
  /** The last hash the database was built from. */
  built_from: string;
  /** The last hash the store holds now, when it has one. */
  now: string | null;
  /** For `rows`: the first row that differs, its table, key and columns. */
  where: string | null;
  /** Whether the store's run verifies now (`verifyRun`, its bundle and experiment included). */
  verified: boolean;
  /** Why, in one line, when the state is not `same`. */
  problem: string | null;
}

/** What the trace database says of a run's source: its `trace_sources` row. */
export interface TraceSourceRow {
  run_id: string;
  store_uri: string;
  runs_root: string;
  last_hash: string;
  verified: number;
  build_version: string;
  rows_digest: string | null;
  /** The MAC of the digest and the manifest under the user's rows key, when the build had the key. */
  rows_mac: string | null;
}

/** What the check of a run reads of its evidence before it looks at the rows, read ahead by {@linkcode readSourceEvidence}. */
export interface SourceEvidence {
  manifest: string | null;
  /** The lines, read with the manifest; awaited only when the manifest names the built last hash. */
  events: Promise<string | null>;
}

/**
 * Reads what the check of a run reads first: the store's record of it, its manifest and its lines. A check of many
 * runs (an export) reads the next runs' files while it computes this run's digest, so that each run does not
 * wait on the disk in turn.
 *
 * @param store The run's store, open to read.
 * @param runId The run.
 * @returns The evidence, or the store's error (`RunNotFound`, …), which the check reports as it would its own.
 * @example
 * ```ts
 * import { readSourceEvidence } from "./check_run.ts";
 * // const evidence = readSourceEvidence(store, sourceRow.run_id);
 * // await checkTraceRun(trace.db, sourceRow, store, { evidence });
 * ```
 */
export async function readSourceEvidence(store: EvidenceStore, runId: string): Promise<SourceEvidence> {
  const record = await store.readRun(runId);
  const manifest = await record.manifestText();
  const events = record.eventsText();
  events.catch(() => {}); // its error is the check's, when it awaits it
  return { manifest, events };
}

/**
 * Checks one run of a trace database against its store.
 *
 * @param trace The open trace database.
 * @param row The run's `trace_sources` row.
 * @param store The run's store, open to read.
 * @param options `catalog`: reads the run's committed bundle and experiment; `key`: the rows key, with which
 * rows whose MAC holds over their digest and the store's manifest now are trusted without building the run
 * again (without it, the run is built again from its evidence and compared row by row); `tables`: takes the
 * file's rows of the run as the check read them for their digest (an export makes its lines from them);
 * `evidence`: the run's files as {@linkcode readSourceEvidence} read them ahead (else they are read here);
 * `hasher`: with the key, reads and hashes the run's rows on its worker, in this snapshot of the file, so that
 * the caller can go on meanwhile (the same digest of the same rows; when the MAC holds, `tables` takes the
 * worker's line tables of the rows it hashed, with only the columns an export's lines use).
 * @returns How the run compares; it prints nothing.
 * @throws Only on a failure that is not the run's (a store that cannot be reached is `unreadable`).
 * @example
 * ```ts
 * import { checkTraceRun } from "./check_run.ts";
 * // const result = await checkTraceRun(trace.db, sourceRow, store, { catalog });
 * ```
 */
export async function checkTraceRun(
  trace: DatabaseSync,
  row: TraceSourceRow,
  store: EvidenceStore,
  options: {
    catalog?: Catalog | (() => Catalog | Promise<Catalog>);
    key?: Uint8Array | null;
    tables?: (tables: TraceRunTables) => void;
    evidence?: Promise<SourceEvidence>;
    hasher?: RowsHasher | null;
  } = {},
): Promise<TraceSourceCheck> {
  const id = row.run_id;
  const base = {
    run_id: id,
    store_uri: row.store_uri,
    built_from: row.last_hash,
    where: null,
    verified: false,
  };
  const again = `build it again with --run ${id}`;
  try {
    const evidence = await (options.evidence ?? readSourceEvidence(store, id));
    const manifest = evidence.manifest;
    const now = manifest === null
      ? null
      : (parseWeighed(manifest) as { last_hash?: string }).last_hash ?? null;
    if (now !== row.last_hash) {
      const problem = now === null
        ? "the store's run has no manifest now"
        : `the store's last hash is ${now.slice(0, 12)}…, not ${
          row.last_hash.slice(0, 12)
        }… as built; ${again}`;
      return { ...base, state: "changed", now, problem };
    }
    // A line changed in place, with the manifest left alone, no longer chains to the last hash.
    const broken = chainBreak(await evidence.events, now, row.verified === 1);
    if (broken !== null) return { ...base, state: "changed", now, problem: `${broken}; ${again}` };
    if (options.key && row.rows_mac !== null) {
      const same = { ...base, verified: row.verified === 1, state: "same" as const, now, problem: null };
      const seal = { key: options.key, manifest: manifest! };
      // The worker's digest of the rows, in this snapshot; when its MAC does not hold, the rows are read here.
      // The lines are then made of the rows it hashed (its read), not of another read of the file.
      if (options.hasher) {
        const hashed = await options.hasher.digest(id);
        if (macHolds(row, { ...seal, digest: hashed.digest })) {
          options.tables?.(hashed.tables);
          return same;
        }
      }
      const found = traceRunDigest(trace, row.run_id, { tables: options.tables });
      if (
        macHolds(row, { ...seal, digest: found.digest }) ||
        macHolds(row, { ...seal, digest: found.canonical })
      ) {
        return same;
      }
    }
    return await rebuiltCheck(trace, { row, store, base, now, again, options });
  } catch (error) {
    const base2 = { ...base, now: null };
    if (error instanceof RunNotFound) {
      return { ...base2, state: "missing", problem: `the store has no run ${id} now` };
    }
    if (error instanceof ProveviError || error instanceof SyntaxError) {
      return { ...base2, state: "unreadable", problem: error.message.split("\n")[0]! };
    }
    throw error;
  }
}

/** What the check of a run whose rows have no key to trust says: the run built again and compared row by row. */
async function rebuiltCheck(
  trace: DatabaseSync,
  c: {
    row: TraceSourceRow;
    store: EvidenceStore;
    base: Omit<TraceSourceCheck, "state" | "now" | "problem">;
    now: string | null;
    again: string;
    options: {
      catalog?: Catalog | (() => Catalog | Promise<Catalog>);
      tables?: (tables: TraceRunTables) => void;
    };
  },
): Promise<TraceSourceCheck> {
  const { row, store, base, now, again, options } = c;
  const id = row.run_id;
  const source = await sourceRun(store, id, {
    allowUnverified: true,
    ...(options.catalog === undefined ? {} : { catalog: options.catalog }),
  });
  if (source.kind !== "ready") {
    const why = source.kind === "open" ? "the store's run is not sealed now" : source.problems.join("; ");
    return { ...base, state: "unreadable", now, problem: why };
  }
  const verified = source.problems.length === 0;
  if (row.verified === 1 && !verified) {
    return {
      ...base,
      state: "unverified",
      now,
      problem: `it was built verified, and it does not verify now: ${source.problems[0]}`,
    };
  }
  using scratch = memoryTraceDb();
  // The source's place is where the check found it: the file's own words, kept by the file's digest.
  const rebuilt = { ...source.source, store_uri: row.store_uri, runs_root: row.runs_root };
  new RowWriter(scratch.db).writeRun(id, { source: rebuilt, rows: source.rows, replace: false });
  const found = traceRunDigest(trace, id, { tables: options.tables });
  const where = rowDifference(found, traceRunDigest(scratch.db, id));
  if (where === null) return { ...base, verified, state: "same", now, problem: null };
  return {
    ...base,
    verified,
    state: "rows",
    now,
    where,
    problem: `the database's rows differ from what the run's evidence gives: ${where}; ${
      whyRows(row, found)
    }; ${again}`,
  };
}

/**
 * Whether the run's rows in the file, with the store's manifest as it is now, are what the build sealed with the
 * key: the MAC over the rows' digest, computed again, and the manifest's SHA-256 compared. A file edited without
 * the key cannot pass; a manifest changed since the build does not. A file built before the digest's format 2
 * sealed the RFC 8785 digest, which the caller tries when the format 2 digest does not hold.
 */
function macHolds(
  row: TraceSourceRow,
  { key, manifest, digest }: { key: Uint8Array; manifest: string; digest: string },
): boolean {
  if (row.rows_mac === null) return false;
  const seal = { run_id: row.run_id, rows_digest: digest, manifest_sha256: sha256Hex(manifest) };
  return rowsMacHolds(row.rows_mac, { key, seal });
}

/** What the digest kept at the build says of rows that differ from the evidence. */
function whyRows(row: TraceSourceRow, found: TraceRunDigest): string {
  if (row.rows_digest === null) return "the build kept no digest of them (an older provtrace)";
  if (row.rows_digest !== found.digest && row.rows_digest !== found.canonical) {
    return "they changed in the file after the build";
  }
  const map = (v: string) => v.split("+")[1] ?? v;
  if (map(row.build_version) !== map(TRACE_BUILD_VERSION)) {
    return `they were built by provtrace ${row.build_version}, which maps events to rows differently`;
  }
  return "the digest kept at the build was rewritten with them, or the store's assessments of the run changed since";
}
