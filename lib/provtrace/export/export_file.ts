/**
 * An export written down, with its manifest: the lines go to a file (or to a writer, such as standard output),
 * the provenance where the format keeps it (`PROVENANCE_PLACE`: in each line, in the trajectory's `extra`, or
 * in a side file `FILE.provenance.jsonl` of the same line count), and a manifest beside the file
 * (`FILE.manifest.json`) and in the trace database (`trace_exports`, `trace_export_lines`): the export's
 * SHA-256, which is its ID, the runs and the events each line holds, the filters, the policy that let it
 * out, and the toolkit's version. `provtrace lineage` reads the database's copy.
 * @module
 */
import { createHash } from "node:crypto";
import { basename, resolve } from "node:path";
import type { Json } from "../../provevi/mod.ts";
import { ProveviError } from "../../provevi/evidence/mod.ts";
import { nowUtc } from "../../provevi/evidence/mod.ts";
import { openTraceDb, TRACE_BUILD_VERSION } from "../db/mod.ts";
import {
  exportTrace,
  type TraceExport,
  type TraceExportLine,
  type TraceExportOptions,
  type TraceExportPolicy,
} from "./export.ts";
import { PROVENANCE_PLACE, type TraceExportFormat } from "./formats.ts";
import { insertLineRows } from "./_line_rows.ts";
import denoJson from "../../../deno.json" with { type: "json" };

/** Where {@linkcode writeTraceExport} writes. */
export interface TraceExportFileOptions extends TraceExportOptions {
  /** The file of the lines; its side files go beside it. Without it, `write` takes the lines. */
  out?: string;
  /** Takes the lines' text, piece by piece, when there is no `out` (a format with a side file needs `out`). */
  write?: (text: string) => void | Promise<void>;
}

/** An export's manifest: what it holds and where it came from. */
export interface TraceExportManifest {
  manifest_version: 1;
  /** The SHA-256 of the lines' bytes: the export's ID. */
  export_id: string;
  format: TraceExportFormat;
  /** The file's name, or null for lines written elsewhere (standard output). */
  file: string | null;
  lines: number;
  /** Where each line's provenance is, and the side file's name and SHA-256 when it is one. */
  provenance: { place: string; file: string | null; sha256: string | null };
  /** The filters and options that chose the lines. */
  filters: { [key: string]: Json };
  toolkit_version: string;
  build_version: string;
  created_at: string;
  policy: TraceExportPolicy | null;
  /** The runs the filters chose and the export refused, with why. */
  refused: { run_id: string; problem: string }[];
  /** Each run the lines came from, with the events they hold and the lines that hold each (1-based). */
  runs: {
    run_id: string;
    last_hash: string;
    store_uri: string;
    verified: boolean;
    events: { seq: number; line_hash: string; lines: number[] }[];
  }[];
}

/** What {@linkcode writeTraceExport} gives. */
export interface TraceExportWritten {
  exported: TraceExport;
  manifest: TraceExportManifest;
  /** The paths written: the lines, the side file (or null), the manifest (or null without `out`). */
  paths: { lines: string | null; provenance: string | null; manifest: string | null };
}

/**
 * The text of one line as the format writes it, and its provenance's line for a side file.
 *
 * @param line The line, with its provenance.
 * @param format The format.
 * @returns The line's JSON, and the side file's JSON line (or null when the provenance is in the line).
 */
export function exportLineText(
  line: TraceExportLine,
  format: TraceExportFormat,
): { text: string; provenance: string | null } {
  const place = PROVENANCE_PLACE[format];
  if (place === "line") return { text: JSON.stringify(line), provenance: null };
  const { provenance, ...rest } = line;
  if (place === "extra") {
    const extra = (rest.extra ?? {}) as { [key: string]: unknown };
    return { text: JSON.stringify({ ...rest, extra: { ...extra, provenance } }), provenance: null };
  }
  return { text: JSON.stringify(rest), provenance: JSON.stringify(provenance) };
}

/**
 * Exports, writes the lines and their provenance, and records the export's manifest beside the file and in
 * the trace database.
 *
 * @param db The trace database's file.
 * @param options The export's options, and where it goes.
 * @returns The export, its manifest and the paths written.
 * @throws ProveviError as {@linkcode exportTrace} does, for a format with a side file and no `out`, or a file
 * that cannot be written.
 * @example
 * ```ts
 * import { buildTrace, writeTraceExport } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await buildTrace({ store: "file", runs: "fixtures/runs", db: `${dir}/trace.db` });
 * const { manifest } = await writeTraceExport(`${dir}/trace.db`, {
 *   kind: "steps",
 *   runs: "fixtures/runs",
 *   out: `${dir}/steps.jsonl`,
 * });
 * assert.match(manifest.export_id, /^[0-9a-f]{64}$/);
 * ```
 */
export async function writeTraceExport(
  db: string,
  options: TraceExportFileOptions,
): Promise<TraceExportWritten> {
  const place = PROVENANCE_PLACE[options.kind] ?? "line";
  if (place === "side file" && options.out === undefined) {
    throw new ProveviError(
      `--format ${options.kind} keeps each line's provenance in a side file beside the export: give --out FILE`,
    );
  }
  if (options.out === undefined && options.write === undefined) {
    throw new TypeError("writeTraceExport needs out or write");
  }
  const exported = await exportTrace(db, options);
  const paths = {
    lines: options.out ?? null,
    provenance: place === "side file" ? `${options.out}.provenance.jsonl` : null,
    manifest: options.out === undefined ? null : `${options.out}.manifest.json`,
  };
  const hashes = await writeLines(exported.lines, options, paths);
  const manifest = manifestOf(exported, options, { ...hashes, paths });
  if (paths.manifest) await writeText(paths.manifest, JSON.stringify(manifest, null, 2) + "\n");
  recordExport(db, manifest, paths.lines === null ? null : resolve(paths.lines));
  return { exported, manifest, paths };
}

/** Writes the lines (and the side file), and gives the SHA-256 of each. */
async function writeLines(
  lines: TraceExportLine[],
  options: TraceExportFileOptions,
  paths: { lines: string | null; provenance: string | null },
): Promise<{ sha256: string; provenanceSha256: string | null }> {
  const main = await sink(paths.lines, options.write);
  const side = paths.provenance ? await sink(paths.provenance) : null;
  try {
    for (const line of lines) {
      const { text, provenance } = exportLineText(line, options.kind);
      // An await only when a piece is full: a line that only joins the piece costs no turn of the event loop.
      const full = main.add(text + "\n");
      if (full) await full;
      const sideFull = side && provenance !== null ? side.add(provenance + "\n") : null;
      if (sideFull) await sideFull;
    }
    return { sha256: await main.end(), provenanceSha256: side ? await side.end() : null };
  } finally {
    main.close();
    side?.close();
  }
}

/** A place lines go, in pieces of about a megabyte, hashed as they go. */
async function sink(path: string | null, write?: (text: string) => void | Promise<void>) {
  const hash = createHash("sha256");
  const encoder = new TextEncoder();
  let file: Deno.FsFile | null = null;
  if (path !== null) {
    try {
      file = await Deno.open(path, { write: true, create: true, truncate: true });
    } catch (error) {
      throw new ProveviError(`cannot write the export "${path}": ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  let pending: string[] = [];
  let size = 0;
  const flush = async () => {
    if (!pending.length) return;
    const text = pending.join("");
    pending = [];
    size = 0;
    const bytes = encoder.encode(text);
    hash.update(bytes);
    if (file) {
      for (let n = 0; n < bytes.length;) n += await file.write(bytes.subarray(n));
    } else await write!(text);
  };
  return {
    /** Adds a line; gives the write of the piece when the piece is full, and null while it is not. */
    add: (text: string): Promise<void> | null => {
      pending.push(text);
      size += text.length;
      return size >= 1 << 20 ? flush() : null;
    },
    end: async () => {
      await flush();
      return hash.digest("hex");
    },
    close: () => file?.close(),
  };
}

async function writeText(path: string, text: string): Promise<void> {
  try {
    await Deno.writeTextFile(path, text);
  } catch (error) {
    throw new ProveviError(`cannot write "${path}": ${(error as Error).message}`, { cause: error });
  }
}

/** The manifest of an export that was written. */
function manifestOf(
  exported: TraceExport,
  options: TraceExportFileOptions,
  written: { sha256: string; provenanceSha256: string | null; paths: { provenance: string | null } },
): TraceExportManifest {
  const runs = new Map<string, TraceExportManifest["runs"][number]>();
  const lineOf = new Map<string, Map<number, { seq: number; line_hash: string; lines: number[] }>>();
  exported.lines.forEach((line, i) => {
    const p = line.provenance;
    for (const source of [p, ...(p.subagents ?? [])]) {
      if (!runs.has(source.run_id)) {
        runs.set(source.run_id, {
          run_id: source.run_id,
          last_hash: source.last_hash,
          store_uri: source.store_uri,
          verified: source.verified,
          events: [],
        });
        lineOf.set(source.run_id, new Map());
      }
      const events = lineOf.get(source.run_id)!;
      for (const e of source.events) {
        const entry = events.get(e.seq) ?? { seq: e.seq, line_hash: e.line_hash, lines: [] };
        if (entry.lines.at(-1) !== i + 1) entry.lines.push(i + 1);
        events.set(e.seq, entry);
      }
    }
  });
  for (const [id, events] of lineOf) {
    runs.get(id)!.events = [...events.values()].sort((a, b) => a.seq - b.seq);
  }
  const filters: { [key: string]: Json } = {};
  for (
    const key of ["per", "tokens", "experiment", "agent", "status", "assessment", "allowUnverified"] as const
  ) {
    if (options[key] !== undefined) filters[key] = options[key] as Json;
  }
  const place = PROVENANCE_PLACE[options.kind];
  return {
    manifest_version: 1,
    export_id: written.sha256,
    format: options.kind,
    file: options.out === undefined ? null : basename(options.out),
    lines: exported.lines.length,
    provenance: {
      place,
      file: written.paths.provenance === null ? null : basename(written.paths.provenance),
      sha256: written.provenanceSha256,
    },
    filters,
    toolkit_version: denoJson.version,
    build_version: TRACE_BUILD_VERSION,
    created_at: nowUtc(),
    policy: exported.lines[0]?.provenance.policy ?? null,
    refused: exported.refused.map((r) => ({ run_id: r.run_id, problem: r.problem })),
    runs: [...runs.values()],
  };
}

/** Keeps the manifest in the trace database: the export, and a row per line and event it holds. */
function recordExport(db: string, manifest: TraceExportManifest, path: string | null): void {
  using trace = openTraceDb(db, { write: true });
  trace.db.exec("BEGIN IMMEDIATE");
  try {
    trace.db.prepare("DELETE FROM trace_export_lines WHERE export_id = ?").run(manifest.export_id);
    const text = JSON.stringify(manifest);
    trace.db.prepare(`INSERT OR REPLACE INTO trace_exports
      (export_id, format, path, lines, filters, toolkit_version, created_at, manifest)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(
      manifest.export_id,
      manifest.format,
      path,
      manifest.lines,
      JSON.stringify(manifest.filters),
      manifest.toolkit_version,
      manifest.created_at,
      text,
    );
    insertLineRows(trace.db, manifest);
    trace.db.exec("COMMIT");
  } catch (error) {
    if (trace.db.isTransaction) trace.db.exec("ROLLBACK");
    throw error;
  }
}
