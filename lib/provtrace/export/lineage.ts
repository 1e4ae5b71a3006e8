/**
 * Lineage, from the manifests the trace database keeps of each export: which exports and lines a run fed, and
 * which runs an export holds; and the check that finds the exports a run taints, because the store no longer
 * holds it (a deletion, as a request to forget a run asks) or holds it changed (its last hash, or the line of
 * an event an export holds, is not what the export recorded). A deletion request must reach the datasets a
 * run fed: `provtrace lineage RUN` names them, and `--check` names them again after the run is gone.
 * @module
 */
import { parseWeighed } from "../../provevi/evidence/json_depth.ts";
import { createHash } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import { ProveviError, RunNotFound, runsRoot } from "../../provevi/evidence/mod.ts";
import { readEventsText, sha256Hex } from "../../provevi/evidence/mod.ts";
import { closeNoWait, openNoWaitSync, readNoWaitSync } from "../../provevi/evidence/open_file.ts";
import { openTraceDb } from "../db/mod.ts";
import { SourceStores } from "../build/_source_stores.ts";
import type { TraceExportManifest } from "./export_file.ts";

/** An export as the database records it. */
export interface TraceExportRecord {
  export_id: string;
  format: string;
  /** The file it was written to, or null (standard output). */
  path: string | null;
  lines: number;
  created_at: string;
}

/** What {@linkcode traceLineage} gives for a run: every export and line it fed. */
export interface TraceRunLineage {
  of: "run";
  run_id: string;
  exports: (TraceExportRecord & { fed: number[] })[];
}

/** What {@linkcode traceLineage} gives for an export: the runs it holds. */
export interface TraceExportLineage {
  of: "export";
  export: TraceExportRecord;
  runs: { run_id: string; last_hash: string; verified: boolean; events: number; lines: number }[];
}

/**
 * The lineage of a run or of an export.
 *
 * @param db The trace database's file.
 * @param target A run ID; or an export's ID (its SHA-256, or 12 or more of its first digits) or file.
 * @returns The exports and lines the run fed, or the runs the export holds.
 * @throws ProveviError when the database holds no such run or export.
 * @example
 * ```ts
 * import { buildTrace, traceLineage, writeTraceExport } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await buildTrace({ store: "file", runs: "fixtures/runs", db: `${dir}/trace.db` });
 * await writeTraceExport(`${dir}/trace.db`, { kind: "steps", runs: "fixtures/runs", out: `${dir}/steps.jsonl` });
 * const lineage = traceLineage(`${dir}/trace.db`, "run-20261129T120000Z-0badc0de");
 * assert.equal(lineage.of, "run");
 * if (lineage.of === "run") assert.equal(lineage.exports.length, 1);
 * ```
 */
export function traceLineage(db: string, target: string): TraceRunLineage | TraceExportLineage {
  using trace = openTraceDb(db);
  const record = exportRecord(trace.db, target);
  if (record) {
    const manifest = manifestOf(trace.db, record.export_id);
    return {
      of: "export",
      export: record,
      runs: manifest.runs.map((r) => ({
        run_id: r.run_id,
        last_hash: r.last_hash,
        verified: r.verified,
        events: r.events.length,
        lines: new Set(r.events.flatMap((e) => e.lines)).size,
      })),
    };
  }
  const fed = trace.db.prepare(
    "SELECT export_id, group_concat(DISTINCT line) AS lines FROM trace_export_lines WHERE run_id = ? GROUP BY export_id",
  ).all(target) as { export_id: string; lines: string }[];
  const known = fed.length > 0 ||
    trace.db.prepare("SELECT 1 FROM trace_sources WHERE run_id = ?").get(target);
  if (!known) {
    throw new ProveviError(
      `the trace database "${db}" has no run or export "${target}": give a run ID, an export's ID or its file`,
    );
  }
  return {
    of: "run",
    run_id: target,
    exports: fed.map((f) => ({
      ...exportRecord(trace.db, f.export_id)!,
      fed: f.lines.split(",").map(Number).sort((a, b) => a - b),
    })).sort((a, b) => a.created_at.localeCompare(b.created_at)),
  };
}

/** A run that taints an export: gone from its store, or changed there. */
export interface TaintingRun {
  run_id: string;
  state: "removed" | "changed" | "unreadable";
  problem: string;
}

/** What {@linkcode checkLineage} gives. */
export interface TraceLineageCheck {
  ok: boolean;
  /** Each export checked, with the runs that taint it (none when it is clean). */
  exports: (TraceExportRecord & { tainted: TaintingRun[] })[];
}

/**
 * Checks every export (or one) against the runs it holds: a run removed from its store, or found changed,
 * taints each export that holds it.
 *
 * @param db The trace database's file.
 * @param options `export`: only this export (its ID or file); `runs` and `stores`: where runs are read, as for
 *   `checkTrace` (the user's runs root, and `file` alone by default).
 * @returns The exports, each with the runs that taint it.
 * @throws ProveviError for a database that cannot be opened, or an export it does not record.
 * @example
 * ```ts
 * import { buildTrace, checkLineage, writeTraceExport } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await buildTrace({ store: "file", runs: "fixtures/runs", db: `${dir}/trace.db` });
 * await writeTraceExport(`${dir}/trace.db`, { kind: "steps", runs: "fixtures/runs", out: `${dir}/steps.jsonl` });
 * const check = await checkLineage(`${dir}/trace.db`, { runs: "fixtures/runs" });
 * assert.equal(check.ok, true);
 * assert.deepEqual(check.exports.map((e) => e.tainted), [[]]);
 * ```
 */
export async function checkLineage(
  db: string,
  options: { export?: string; runs?: string; stores?: readonly string[] } = {},
): Promise<TraceLineageCheck> {
  using trace = openTraceDb(db);
  let records = trace.db.prepare(
    "SELECT export_id, format, path, lines, created_at FROM trace_exports ORDER BY created_at",
  ).all() as unknown as TraceExportRecord[];
  if (options.export !== undefined) {
    const one = exportRecord(trace.db, options.export);
    if (!one) throw new ProveviError(`the trace database "${db}" records no export "${options.export}"`);
    records = [one];
  }
  await using stores = new SourceStores(options);
  const verdicts = new Map<string, TaintingRun | null>();
  const out: TraceLineageCheck["exports"] = [];
  for (const record of records) {
    const manifest = manifestOf(trace.db, record.export_id);
    const tainted: TaintingRun[] = [];
    for (const run of manifest.runs) {
      const key = `${run.run_id} ${run.last_hash} ${
        JSON.stringify(run.events.map((e) => [e.seq, e.line_hash]))
      }`;
      if (!verdicts.has(key)) {
        verdicts.set(key, await runVerdict(trace.db, run, { stores, runs: options.runs }));
      }
      const verdict = verdicts.get(key)!;
      if (verdict) tainted.push(verdict);
    }
    out.push({ ...record, tainted });
  }
  return { ok: out.every((e) => e.tainted.length === 0), exports: out };
}

/** Whether the store still holds a run as an export recorded it; null when it does. */
async function runVerdict(
  db: DatabaseSync,
  run: TraceExportManifest["runs"][number],
  context: { stores: SourceStores; runs?: string },
): Promise<TaintingRun | null> {
  const source = db.prepare("SELECT store_uri, runs_root FROM trace_sources WHERE run_id = ?").get(
    run.run_id,
  ) as
    | { store_uri: string; runs_root: string }
    | undefined;
  const store = await context.stores.open(
    source ?? { store_uri: run.store_uri, runs_root: runsRoot(context.runs) },
  );
  const id = run.run_id;
  if (typeof store === "string") return { run_id: id, state: "unreadable", problem: store };
  try {
    const record = await store.readRun(id);
    const manifest = await record.manifestText();
    const now = manifest === null
      ? null
      : (parseWeighed(manifest) as { last_hash?: string }).last_hash ?? null;
    if (now !== run.last_hash) {
      return {
        run_id: id,
        state: "changed",
        problem: `the store's run ${id} has last hash ${now?.slice(0, 12) ?? "none"}…, not ${
          run.last_hash.slice(0, 12)
        }… as exported`,
      };
    }
    const lines = readEventsText((await record.eventsText()) ?? "").lines;
    for (const e of run.events) {
      const line = lines[e.seq];
      if (line === undefined || sha256Hex(line) !== e.line_hash) {
        return {
          run_id: id,
          state: "changed",
          problem: `the store's run ${id} has another event at seq ${e.seq} than the one exported`,
        };
      }
    }
    return null;
  } catch (error) {
    if (error instanceof RunNotFound) {
      return { run_id: id, state: "removed", problem: `the store ${run.store_uri} has no run ${id} now` };
    }
    if (error instanceof ProveviError || error instanceof SyntaxError) {
      return { run_id: id, state: "unreadable", problem: (error as Error).message.split("\n")[0]! };
    }
    throw error;
  }
}

/** The export a target names: its ID, 12 or more of its first digits, or its file (hashed). */
function exportRecord(db: DatabaseSync, target: string): TraceExportRecord | null {
  const select = "SELECT export_id, format, path, lines, created_at FROM trace_exports";
  if (/^[0-9a-f]{12,64}$/.test(target)) {
    const found = db.prepare(`${select} WHERE export_id LIKE ? ORDER BY export_id LIMIT 2`).all(
      `${target}%`,
    ) as unknown as TraceExportRecord[];
    if (found.length === 1) return found[0]!;
  }
  const id = fileSha256(target);
  if (id === null) return null;
  return (db.prepare(`${select} WHERE export_id = ?`).get(id) as unknown as TraceExportRecord | undefined) ??
    null;
}

/** 1 MiB: the most of an export file held at once while it is hashed (an export may be gigabytes). */
const READ = 1 << 20;

/**
 * The SHA-256 of a file the user names, read a chunk at a time; null when nothing readable is there or it is
 * not a plain file. Opened without waiting, and what was opened is looked at: a FIFO at the path (or swapped in
 * after a look at it) is no export, not a read that waits for ever. A link is followed, as the user meant.
 */
function fileSha256(path: string): string | null {
  let opened: ReturnType<typeof openNoWaitSync>;
  try {
    opened = openNoWaitSync(path, { follow: true });
  } catch {
    return null;
  }
  try {
    if (!opened.info.isFile) return null;
    const hash = createHash("sha256");
    const chunk = new Uint8Array(READ);
    for (let n = readNoWaitSync(opened.fd, chunk); n > 0; n = readNoWaitSync(opened.fd, chunk)) {
      hash.update(chunk.subarray(0, n));
    }
    return hash.digest("hex");
  } catch {
    return null;
  } finally {
    closeNoWait(opened.fd);
  }
}

function manifestOf(db: DatabaseSync, exportId: string): TraceExportManifest {
  const row = db.prepare("SELECT manifest FROM trace_exports WHERE export_id = ?").get(exportId) as {
    manifest: string;
  };
  return JSON.parse(row.manifest) as TraceExportManifest;
}
