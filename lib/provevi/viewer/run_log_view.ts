/**
 * Where a run is in its store's log, for the run page's log panel (`api/runs/:run/log`): its leaf's index, the
 * log's size and its latest witnessed checkpoint, and the run's own proof (`log.tlog-proof`): the checkpoint it
 * is proved against, whether it proves the run as its evidence is now, whether the store's log key signed it,
 * and the names on its cosignatures. The viewer holds no witness's key, so it names the cosigners and does not
 * vouch for them: `prove verify RUN --log-key … --witness … --quorum N` checks them.
 * @module
 */
import type { RunRecord } from "../evidence/record.ts";
import type { EvidenceStore } from "../store/store.ts";
import { parseCheckpoint } from "../log/checkpoint.ts";
import { parseNote } from "../log/note.ts";
import { proofProvesRun, readRunLogFiles } from "../log/run_in_log.ts";
import { parseTlogProof } from "../log/tlog_proof.ts";
import { checkCheckpoint } from "../log/trust_policy.ts";

/** A checkpoint as the panel shows it. */
export interface LogCheckpointView {
  origin: string;
  size: number;
  /** The names on its cosignatures (cosignature/v1), not checked here. */
  cosigned_by: string[];
}

/** Where a run is in its store's log. */
export interface RunLogView {
  /** Whether the store keeps a log. */
  kept: boolean;
  /** The index of the run's leaf, or null when the log has none. */
  index: number | null;
  /** The log's latest checkpoint, and its latest cosigned one; null when the log is empty. */
  log: { latest: LogCheckpointView; witnessed: LogCheckpointView | null } | null;
  /** The run's own proof, or null when its folder holds none. */
  proof:
    | (LogCheckpointView & {
      index: number;
      /** It proves this run, as its manifest and attestation are now, at its index under its checkpoint. */
      proves: boolean;
      /** The store's log key signed its checkpoint. */
      log_signed: boolean;
    })
    | null;
  /** Why the log could not be read, or null. */
  problem: string | null;
}

/** A checkpoint's origin, size and cosigners' names (a cosignature/v1 is 72 bytes: a time and a signature). */
function checkpointView(note: string): LogCheckpointView {
  const parsed = parseNote(note);
  const c = parseCheckpoint(parsed.text);
  const cosigned = parsed.signatures.filter((s) => s.name !== c.origin && s.signature.length === 72);
  return { origin: c.origin, size: c.size, cosigned_by: [...new Set(cosigned.map((s) => s.name))] };
}

/**
 * Where a run is in its store's log.
 *
 * @param store The store.
 * @param record The run.
 * @returns The panel's view; a log that cannot be read gives its problem, never an error.
 */
export async function runLogView(store: EvidenceStore, record: RunRecord): Promise<RunLogView> {
  const log = store.log;
  const view: RunLogView = { kept: log !== undefined, index: null, log: null, proof: null, problem: null };
  try {
    if (log) {
      view.index = await log.indexOf(record.runId);
      const [latest, witnessed] = [await log.checkpoint(), await log.witnessed()];
      if (latest !== null) {
        view.log = {
          latest: checkpointView(latest),
          witnessed: witnessed ? checkpointView(witnessed) : null,
        };
      }
    }
    view.proof = await proofView(store, record);
  } catch (error) {
    view.problem = (error as Error).message;
  }
  return view;
}

async function proofView(store: EvidenceStore, record: RunRecord): Promise<RunLogView["proof"]> {
  if (record.folder === null) return null;
  const { attestation, proofText } = await readRunLogFiles(record.folder);
  if (proofText === null) return null;
  const proof = parseTlogProof(proofText);
  const manifestText = await record.manifestText().catch(() => null);
  const key = await store.log?.key();
  const logSigned = key
    ? checkCheckpoint(proof.checkpoint, { logs: [key.verifier], witnesses: [], quorum: 0 }).ok
    : false;
  return {
    ...checkpointView(proof.checkpoint),
    index: proof.index,
    proves: manifestText !== null && proofProvesRun(proofText, { manifestText, attestation }),
    log_signed: logSigned,
  };
}
