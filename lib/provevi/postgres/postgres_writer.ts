/**
 * The postgres store's writer of one run: each event's rows committed once its line is in `events.jsonl`, and the
 * seal's columns and the run's leaf in the store's log in one transaction.
 * @module
 */
import type postgres from "postgres";
import { EvidenceError } from "../evidence/errors.ts";
import type { EvidenceEvent } from "../evidence/event.ts";
import { type Manifest, manifestText } from "../evidence/manifest.ts";
import type { FileRunWriter } from "../store/file_store.ts";
import type { RunWriter, SealInfo } from "../store/store.ts";
import { runEnd, sealRow } from "../store/store_rows.ts";
import type { RowsAppend } from "../log/rows_log.ts";
import { leafOfSeal } from "../log/run_leaf.ts";
import { writeProofFile } from "../store/store_log_files.ts";
import { isConnectionLoss, pgMessage } from "./postgres_connection.ts";
import { eventStatement, writeCreatedRowsPg } from "./postgres_rows.ts";
import { appendLogPg } from "./postgres_log.ts";
import { insertPayloadRows, updateSeal } from "./_seal_rows.ts";

/**
 * Writes one run through the postgres store: the file store's writer, wrapped so that each event's rows are
 * committed only once its line is in `events.jsonl`, and each line is taken back when its rows cannot be
 * committed. An event is one statement (one round trip); the first event, and the first after a failed one,
 * is a transaction that also writes what `run_created` implies or clears rows that a lost reply left behind.
 */
export class PostgresRunWriter implements RunWriter {
  readonly #sql: postgres.Sql;
  readonly #file: FileRunWriter;
  #status = "running";
  /** A write failed: a commit whose reply was lost may have left a row past the file's last line. */
  #unsure = false;
  readonly #uri: string;

  /**
   * @param sql The store's pool.
   * @param file The run's file writer.
   * @param options `uri`: the store's URI, for errors.
   */
  constructor(sql: postgres.Sql, file: FileRunWriter, options: { uri?: string } = {}) {
    this.#sql = sql;
    this.#file = file;
    this.#uri = options.uri ?? "the postgres store";
  }

  /** The run's ID. */
  get runId(): string {
    return this.#file.runId;
  }
  /** The run folder. */
  get folder(): string {
    return this.#file.folder;
  }

  /** Gives the run up unsealed: its folder's writer closes, and its rows are the caller's to discard. */
  abandon(): Promise<void> {
    return this.#file.abandon();
  }

  /** Appends the line, then commits the event's rows; a failed commit takes the line back. */
  async append(line: string, event: EvidenceEvent): Promise<void> {
    if (event.run_id !== this.runId) {
      throw new EvidenceError(`an event of run "${event.run_id}" cannot go in run "${this.runId}"`);
    }
    const previous = this.#file.last;
    const end = runEnd(event, false);
    const changed = end.status !== this.#status ? end : null;
    this.#file.appendSync(line, event); // throws for a sealed run, before any row
    try {
      if (event.seq === 0 || this.#unsure) {
        await this.#sql.begin(async (tx) => {
          if (this.#unsure) {
            await tx.unsafe("DELETE FROM provevi_event_refs WHERE run_id = $1 AND seq >= $2", [
              this.runId,
              event.seq,
            ]);
            await tx.unsafe("DELETE FROM provevi_events WHERE run_id = $1 AND seq >= $2", [
              this.runId,
              event.seq,
            ]);
          }
          const { text, params } = eventStatement(event, line, changed);
          await tx.unsafe(text, params, { prepare: true });
          if (event.type === "run_created" && event.seq === 0) await writeCreatedRowsPg(tx, event);
        });
      } else {
        const { text, params } = eventStatement(event, line, changed);
        await this.#sql.unsafe(text, params, { prepare: true });
      }
    } catch (error) {
      this.#unsure = true;
      try {
        this.#file.unappendLast(line, previous);
      } catch { /* the check reports a line without its row */ }
      throw new EvidenceError(
        `cannot write event ${event.seq} of run "${this.runId}" to ${this.#where()}: ${pgMessage(error)}${
          isConnectionLoss(error) ? " (the connection to the server was lost)" : ""
        }`,
        { cause: error },
      );
    }
    this.#unsure = false;
    this.#status = end.status;
  }

  #where(): string {
    return "the postgres store";
  }

  /** Stores the payload in the run folder and records its hash, size and place. */
  async putPayload(bytes: Uint8Array): Promise<string> {
    const sha256 = await this.#file.putPayload(bytes);
    try {
      await this.#sql.unsafe(
        `INSERT INTO provevi_payloads (run_id, sha256, size, place) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING`,
        [this.runId, sha256, bytes.length, this.#file.placeOf(sha256)],
        { prepare: true },
      );
    } catch (error) {
      throw new EvidenceError(
        `cannot record payload ${sha256} of run "${this.runId}" in ${this.#where()}: ${pgMessage(error)}`,
        { cause: error },
      );
    }
    return sha256;
  }

  /**
   * Seals the run folder, then records the last hash, the manifest's hash, the seal time and the status, any
   * payload row that a lost connection left out, and the run's leaf in the store's log, in one transaction: the
   * run is in the log when the seal returns, and its proof is written into its folder. When the server cannot be
   * reached, the folder is sealed whole and the error says so.
   */
  async seal(info: SealInfo = {}): Promise<Manifest> {
    const manifest = await this.#file.seal(info);
    const text = manifestText(manifest);
    const seal = sealRow(text, manifest, this.#file.last.event);
    const leaf = leafOfSeal(text, this.#file.attestation);
    let logged: RowsAppend;
    try {
      logged = await this.#sql.begin(async (tx) => {
        if (this.#unsure) {
          // A commit whose reply was lost may have left a row past the file's last line: the folder is sealed
          // without it, so it goes.
          await tx.unsafe("DELETE FROM provevi_event_refs WHERE run_id = $1 AND seq >= $2", [
            this.runId,
            this.#file.count,
          ]);
          await tx.unsafe("DELETE FROM provevi_events WHERE run_id = $1 AND seq >= $2", [
            this.runId,
            this.#file.count,
          ]);
        }
        await insertPayloadRows(
          tx,
          this.runId,
          this.#file.payloads.map((p) => ({ ...p, place: this.#file.placeOf(p.sha256) })),
        );
        await updateSeal(tx, this.runId, seal);
        return await appendLogPg(tx, [leaf], this.#uri);
      });
    } catch (error) {
      throw new EvidenceError(
        `run "${this.runId}" is sealed in its folder ${this.folder}, but its seal cannot be recorded in ${this.#where()}: ${
          pgMessage(error)
        }`,
        { cause: error },
      );
    }
    await writeProofFile(this.folder, logged);
    return manifest;
  }
}
