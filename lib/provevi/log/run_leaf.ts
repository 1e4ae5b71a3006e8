/**
 * A run's leaf in the log: the RFC 8785 JSON of `{format, run_id, manifest_sha256, last_hash,
 * attestation_sha256}`, so that the log commits to the run's ID, the bytes of its manifest (and through it to
 * every event, payload and the seal time), its last hash, and the bytes of its signed seal when it has one.
 * @module
 */
import { parseWeighed } from "../evidence/json_depth.ts";
import canonicalize from "canonicalize";
import { ProveviError } from "../evidence/errors.ts";
import { isSha256, sha256Hex } from "../evidence/hash.ts";
import { checkRunId } from "../evidence/record.ts";

/** The `format` of a leaf. */
export const LEAF_FORMAT = "provevi-log-leaf/1";

/** What a leaf says of a run. */
export interface RunLeaf {
  run_id: string;
  /** The SHA-256 of `manifest.json`'s bytes. */
  manifest_sha256: string;
  /** The manifest's `last_hash` (null for a run sealed without events). */
  last_hash: string | null;
  /** The SHA-256 of `attestation.dsse.json`'s bytes, or null for an unsigned run. */
  attestation_sha256: string | null;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The bytes of a leaf.
 *
 * @param leaf What it says.
 * @returns The RFC 8785 JSON, in UTF-8.
 * @example
 * ```ts
 * import { leafBytes } from "./run_leaf.ts";
 * const bytes = leafBytes({ run_id: "run-1", manifest_sha256: "0".repeat(64), last_hash: null, attestation_sha256: null });
 * ```
 */
export function leafBytes(leaf: RunLeaf): Uint8Array {
  return encoder.encode(canonicalize({ format: LEAF_FORMAT, ...leafFields(leaf) })!);
}

function leafFields(leaf: RunLeaf): RunLeaf {
  return {
    run_id: leaf.run_id,
    manifest_sha256: leaf.manifest_sha256,
    last_hash: leaf.last_hash,
    attestation_sha256: leaf.attestation_sha256,
  };
}

/**
 * The leaf of a sealed run, from the bytes of its manifest and of its attestation.
 *
 * @param manifestText The text of `manifest.json`.
 * @param attestation The bytes of `attestation.dsse.json`, or null.
 * @returns The leaf.
 * @throws ProveviError when the manifest is not a manifest.
 */
export function leafOfSeal(manifestText: string, attestation: Uint8Array | null): RunLeaf {
  let manifest: { run_id?: unknown; last_hash?: unknown };
  try {
    manifest = parseWeighed(manifestText) as { run_id?: unknown; last_hash?: unknown };
  } catch (error) {
    throw new ProveviError("cannot make the run's leaf: manifest.json is not JSON", { cause: error });
  }
  if (!isRunId(manifest?.run_id)) {
    throw new ProveviError("cannot make the run's leaf: manifest.json names no run_id that is a run ID");
  }
  return {
    run_id: manifest.run_id,
    manifest_sha256: sha256Hex(manifestText),
    last_hash: typeof manifest.last_hash === "string" ? manifest.last_hash : null,
    attestation_sha256: attestation === null ? null : sha256Hex(attestation),
  };
}

/**
 * Reads a leaf's bytes.
 *
 * @param bytes The bytes.
 * @returns The leaf.
 * @throws ProveviError when they are not a leaf in its canonical form.
 */
export function parseLeaf(bytes: Uint8Array): RunLeaf {
  const bad = (why: string) => new ProveviError(`not a run's leaf: ${why}`);
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw bad("not UTF-8 JSON");
  }
  if (typeof value !== "object" || value === null || value.format !== LEAF_FORMAT) throw bad("no format");
  const keys = Object.keys(value).sort().join(",");
  if (keys !== "attestation_sha256,format,last_hash,manifest_sha256,run_id") throw bad(`fields ${keys}`);
  const hashOrNull = (v: unknown) => v === null || isSha256(v);
  if (
    !isRunId(value.run_id) || !isSha256(value.manifest_sha256) || !hashOrNull(value.last_hash) ||
    !hashOrNull(value.attestation_sha256)
  ) throw bad("a field of the wrong type");
  const leaf = value as unknown as RunLeaf;
  if (!sameBytes(leafBytes(leaf), bytes)) throw bad("not in its RFC 8785 form");
  return leafFields(leaf);
}

/**
 * True when the value is a run ID. A leaf names its run by it, and the next appender finds a killed append's run
 * at `<runs root>/<run_id>`: a leaf left past the size naming `../elsewhere` would have the log sign a run
 * outside the store, and a manifest taken from outside it.
 */
function isRunId(value: unknown): value is string {
  if (typeof value !== "string") return false;
  try {
    checkRunId(value);
    return true;
  } catch {
    return false;
  }
}

/** True when two leaves say the same. */
export function sameLeaf(a: RunLeaf, b: RunLeaf): boolean {
  return a.run_id === b.run_id && a.manifest_sha256 === b.manifest_sha256 && a.last_hash === b.last_hash &&
    a.attestation_sha256 === b.attestation_sha256;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
