/**
 * The manifest that seals a run: the hash of the last line, the payloads with their sizes, the counts, the
 * events lost in lenient mode, and the status.
 * @module
 */
import canonicalize from "canonicalize";
import type { EvidenceEvent } from "./event.ts";

/** The value of the manifest's `format` field in a run whose payloads are each a file of `payloads/`. */
export const MANIFEST_FORMAT = "provevi-manifest/1";
/**
 * The value of the manifest's `format` field in a run that may keep payloads in `payloads.pack` too (small
 * payloads, each a record of one append-only file); what provrun writes.
 */
export const MANIFEST_FORMAT_PACKED = "provevi-manifest/2";
/** The formats a verifier knows. */
export const MANIFEST_FORMATS: readonly string[] = [MANIFEST_FORMAT, MANIFEST_FORMAT_PACKED];

/** Where a writer keeps payloads: each a file (format 1), or small ones in `payloads.pack` (format 2). */
export type PayloadLayout = "files" | "pack";

/** How a sealed run ended. */
export type RunStatus = "completed" | "failed" | "incomplete";

/** An event that lenient mode could not write. */
export interface LostEvent {
  type: string;
  time: string;
  error: string;
}

/** One stored payload. */
export interface PayloadEntry {
  sha256: string;
  size: number;
}

/** The manifest of a sealed run. */
export interface Manifest {
  format: typeof MANIFEST_FORMAT | typeof MANIFEST_FORMAT_PACKED;
  run_id: string;
  status: RunStatus;
  events: number;
  last_hash: string | null;
  payloads: PayloadEntry[];
  payload_bytes: number;
  lost: LostEvent[];
  sealed_at: string;
}

/**
 * The status a run's events give: `completed` after `run_completed`, `failed` after `run_failed`, and
 * `incomplete` when the run was sealed without its ending event.
 *
 * @param last The last event written, or null.
 * @returns The status.
 */
export function statusOf(last: Pick<EvidenceEvent, "type"> | null): RunStatus {
  if (last?.type === "run_completed") return "completed";
  if (last?.type === "run_failed") return "failed";
  return "incomplete";
}

/**
 * Builds a manifest with its payloads in hash order.
 *
 * @param fields Everything but `format` and `payload_bytes`.
 * @param options `layout`: where the run's payloads are kept, which gives the format (`files` by default).
 * @returns The manifest.
 */
export function buildManifest(
  fields: Omit<Manifest, "format" | "payload_bytes">,
  options: { layout?: PayloadLayout } = {},
): Manifest {
  const payloads = [...fields.payloads].sort((a, b) =>
    a.sha256 < b.sha256 ? -1 : a.sha256 > b.sha256 ? 1 : 0
  );
  return {
    format: options.layout === "pack" ? MANIFEST_FORMAT_PACKED : MANIFEST_FORMAT,
    run_id: fields.run_id,
    status: fields.status,
    events: fields.events,
    last_hash: fields.last_hash,
    payloads,
    payload_bytes: payloads.reduce((n, p) => n + p.size, 0),
    lost: fields.lost,
    sealed_at: fields.sealed_at,
  };
}

/** The bytes of `manifest.json`: the canonical JSON of the manifest and a newline. */
export function manifestText(manifest: Manifest): string {
  return canonicalize(manifest) + "\n";
}

/**
 * The `last_hash` that a manifest's text records, read without trusting the rest of it.
 *
 * @param text The text of `manifest.json`, or null when it is missing.
 * @returns The SHA-256 it records, or null when it is missing, not JSON, or records none.
 * @example
 * ```ts
 * import { manifestLastHash } from "./manifest.ts";
 * manifestLastHash(`{"last_hash":"${"a".repeat(64)}"}`); // "aaaa…"
 * manifestLastHash("not json"); // null
 * ```
 */
export function manifestLastHash(text: string | null): string | null {
  try {
    const hash = text === null ? null : JSON.parse(text)?.last_hash;
    return typeof hash === "string" && /^[0-9a-f]{64}$/.test(hash) ? hash : null;
  } catch {
    return null;
  }
}
