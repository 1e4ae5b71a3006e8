/**
 * Writes one run's rows into a trace database all or nothing (a transaction, or a savepoint of the caller's),
 * and keeps the digest of the rows as they went in (`trace_sources.rows_digest`). The build writes the file
 * with it; `check` and the exports write a run again into an in-memory database with it, so both sides of their
 * comparison are made the same way.
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { rowsMac, TRACE_RUN_TABLES, traceRunDigest } from "../db/mod.ts";
import type { TraceRow, TraceRunRows } from "./run_rows.ts";

/**
 * Writes runs' rows, with a prepared statement per table and set of columns.
 *
 * @example
 * ```ts
 * import { memoryTraceDb } from "../db/mod.ts";
 * import { RowWriter } from "./_row_writer.ts";
 * using scratch = memoryTraceDb();
 * const writer = new RowWriter(scratch.db);
 * // writer.writeRun(runId, { source, rows, replace: false });
 * ```
 */
export class RowWriter {
  #db: DatabaseSync;
  #key: Uint8Array | null;
  #statements = new Map<string, StatementSync>();

  /**
   * @param db The open trace database to write.
   * @param options `key`: the rows key, which seals each run's digest and manifest (`trace_sources.rows_mac`).
   */
  constructor(db: DatabaseSync, options: { key?: Uint8Array | null } = {}) {
    this.#db = db;
    this.#key = options.key ?? null;
  }

  /** The statement of a SQL text, prepared once per writer. */
  #statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #insert(table: string, row: TraceRow, verb = "INSERT"): number {
    const columns = Object.keys(row).join(", ");
    const key = `${verb} ${table} ${columns}`;
    let statement = this.#statements.get(key);
    if (!statement) {
      statement = this.#db.prepare(
        `${verb} INTO ${table} (${columns}) VALUES (${Object.keys(row).map(() => "?").join(", ")})`,
      );
      this.#statements.set(key, statement);
    }
    return Number(statement.run(...Object.values(row)).changes);
  }

  /**
   * Writes the run's rows (replacing any it had) and its source, with the digest of what went in; all or
   * nothing: in a transaction of its own, or in a savepoint of the caller's open transaction.
   *
   * @param runId The run.
   * @param run `source`: its `trace_sources` row; `rows`: its rows; `replace`: delete the run's rows first (a
   * build of the run again); `manifestSha256`: the SHA-256 of the manifest they were made from, which the MAC
   * covers (with a key).
   * @returns The rows written.
   */
  writeRun(
    runId: string,
    run: { source: TraceRow; rows: TraceRunRows; replace: boolean; manifestSha256?: string },
  ): number {
    const { source, rows, replace } = run;
    const db = this.#db;
    // Inside a caller's transaction (the build commits runs in batches) the run is a savepoint of it: still
    // all or nothing, without a commit of its own.
    const nested = db.isTransaction;
    db.exec(nested ? "SAVEPOINT run" : "BEGIN IMMEDIATE");
    try {
      if (replace) {
        for (const table of TRACE_RUN_TABLES) {
          this.#statement(`DELETE FROM ${table} WHERE run_id = ?`).run(runId);
        }
      }
      let n = 0;
      this.#insert("trace_sources", source);
      this.#insert("trace_runs", rows.run);
      n += 2;
      for (
        const list of [
          ["trace_spans", rows.spans],
          ["trace_model_calls", rows.modelCalls],
          ["trace_tokens", rows.tokens],
          ["trace_call_messages", rows.callMessages],
          ["trace_tool_calls", rows.toolCalls],
          ["trace_access", rows.access],
          ["trace_assessments", rows.assessments],
        ] as const
      ) {
        for (const row of list[1]) this.#insert(list[0], row);
        n += list[1].length;
      }
      for (const m of rows.messages) {
        const p = m.part as { text?: string; tool_call_id?: string | null; tool_name?: string | null };
        n += this.#insert("trace_messages", {
          hash: m.hash,
          role: m.role,
          part_kind: m.part.kind,
          text: p.text ?? null,
          tool_call_id: p.tool_call_id ?? null,
          tool_name: p.tool_name ?? null,
          content: m.content,
        }, "INSERT OR IGNORE");
      }
      if (replace) {
        db.exec(
          "DELETE FROM trace_messages WHERE NOT EXISTS (SELECT 1 FROM trace_call_messages c WHERE c.message_hash = trace_messages.hash)",
        );
      }
      const digest = traceRunDigest(db, runId).digest;
      const mac = this.#key && run.manifestSha256
        ? rowsMac(this.#key, { run_id: runId, rows_digest: digest, manifest_sha256: run.manifestSha256 })
        : null;
      this.#statement("UPDATE trace_sources SET rows_digest = ?, rows_mac = ? WHERE run_id = ?").run(
        digest,
        mac,
        runId,
      );
      db.exec(nested ? "RELEASE run" : "COMMIT");
      return n;
    } catch (error) {
      if (nested && db.isTransaction) db.exec("ROLLBACK TO run; RELEASE run");
      else if (db.isTransaction) db.exec("ROLLBACK");
      throw error;
    }
  }
}
