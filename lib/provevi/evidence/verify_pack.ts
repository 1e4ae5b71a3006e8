/**
 * The checks of `payloads.pack` (manifest format 2): every record's bytes hash to the SHA-256 its header names,
 * have the listed size, are listed, and are stored once; the pack is whole records.
 * @module
 */
import { sha256Hex } from "./hash.ts";
import type { Manifest } from "./manifest.ts";
import { PACK_FILE, readPack } from "./payload_pack.ts";
import { type Problem, problem } from "./problem.ts";
import type { RunRecord } from "./record.ts";

/**
 * Checks the run's pack against the manifest's list and the payload files.
 *
 * @param record The run.
 * @param of `listed`: the manifest's payloads (size by SHA-256); `files`: the names in `payloads/`; `m`: the
 * manifest, or null for a run not sealed yet; `problems`: where the problems go.
 * @returns The payloads the pack holds once, by SHA-256 (checked here, not again as files).
 */
export async function packProblems(
  record: RunRecord,
  of: {
    listed: ReadonlyMap<string, number>;
    files: ReadonlySet<string>;
    m: Manifest | null;
    problems: Problem[];
  },
): Promise<Set<string>> {
  const held = new Set<string>();
  const file = { file: PACK_FILE };
  let pack: Uint8Array | null;
  try {
    pack = await record.payloadPack();
  } catch (error) {
    of.problems.push(
      problem("payloads.unreadable", `${PACK_FILE} cannot be read: ${(error as Error).message}`, file),
    );
    return held;
  }
  if (pack === null) return held;
  const { records, broken } = readPack(pack);
  for (const r of records) {
    const name = `the record of payload ${r.sha256} in ${PACK_FILE} (at byte ${r.offset})`;
    if (held.has(r.sha256) || of.files.has(r.sha256)) {
      const twice = held.has(r.sha256)
        ? `twice in ${PACK_FILE}`
        : `as payloads/${r.sha256} and in ${PACK_FILE}`;
      of.problems.push(
        problem("payload.stored_twice", `payload ${r.sha256} is stored twice: ${twice}`, file),
      );
      continue;
    }
    held.add(r.sha256);
    const actual = sha256Hex(pack.subarray(r.offset, r.offset + r.size));
    if (of.m && !of.listed.has(r.sha256)) {
      of.problems.push(problem("payload.unlisted", `${name} is not in the manifest's payload list`, file));
    } else if (actual !== r.sha256) {
      of.problems.push(
        problem("payload.hash_mismatch", `${name} was changed: its bytes hash to ${actual}`, file),
      );
    } else if (of.m && of.listed.get(r.sha256) !== r.size) {
      of.problems.push(problem(
        "payload.size",
        `${name} has ${r.size} bytes, but the manifest says ${JSON.stringify(of.listed.get(r.sha256))}`,
        file,
      ));
    }
  }
  if (broken !== null) {
    of.problems.push(problem(
      "pack.broken",
      `${PACK_FILE} is not whole records from byte ${broken.at} (${broken.why}): the file was cut or changed there`,
      file,
    ));
  }
  return held;
}
