/**
 * The rows a seal writes in a postgres store, shared by the writer's seal and the store's completion of a run
 * from its folder: the payload rows a lost connection left out, and the run's seal columns.
 * @module
 */
import type { PayloadEntry } from "../evidence/manifest.ts";
import type { SealRow } from "../store/store_rows.ts";
import type { PgSql } from "./postgres_rows.ts";

/** Inserts payload rows that are not there yet, each with its place in the run folder, in one statement. */
export async function insertPayloadRows(
  tx: PgSql,
  runId: string,
  payloads: readonly (PayloadEntry & { place: string })[],
): Promise<void> {
  if (payloads.length === 0) return;
  await tx.unsafe(
    `INSERT INTO provevi_payloads (run_id, sha256, size, place)
     SELECT $1, p.sha256, p.size, p.place
     FROM jsonb_to_recordset($2::text::jsonb) AS p(sha256 text, size bigint, place text)
     ON CONFLICT DO NOTHING`,
    [runId, JSON.stringify(payloads.map((p) => ({ sha256: p.sha256, size: p.size, place: p.place })))],
  );
}

/** Sets the seal's columns of a run's row. */
export async function updateSeal(tx: PgSql, runId: string, seal: SealRow): Promise<void> {
  await tx.unsafe(
    `UPDATE provevi_runs SET last_hash = $1, manifest_sha256 = $2, sealed_at = $3, status = $4, ended_at = $5
     WHERE run_id = $6`,
    [seal.last_hash, seal.manifest_sha256, seal.sealed_at, seal.status, seal.ended_at, runId],
  );
}
