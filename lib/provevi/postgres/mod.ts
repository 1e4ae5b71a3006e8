/**
 * The postgres store: the sqlite store's tables and views in one PostgreSQL database that many processes and
 * machines write at once; its URIs and credentials, connection, schema and numbered upgrades, row writing and
 * questions across runs. The row check is the one all indexed stores share (`store/row_check.ts`). Imports
 * `evidence/`, `store/` and `experiments/`.
 *
 * @example
 * ```ts
 * import { openStore } from "../mod.ts";
 * await using store = await openStore("postgresql://ada@127.0.0.1:5432/evidence", { runs: "/tmp/runs" });
 * console.log(await store.runIds());
 * ```
 * @module
 */
export * from "./postgres_uri.ts";
export * from "./postgres_schema.ts";
export * from "./postgres_rows.ts";
export * from "./postgres_connection.ts";
export * from "./postgres_store.ts";
export * from "./postgres_writer.ts";
