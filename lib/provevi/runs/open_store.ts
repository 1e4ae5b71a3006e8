/**
 * Opens the store that a store URI names.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import { FileStore } from "../store/file_store.ts";
import { SqliteStore } from "../sqlite/sqlite_store.ts";
import { PostgresStore } from "../postgres/postgres_store.ts";
import { isPostgresUri, redactUri } from "../postgres/postgres_uri.ts";
import type { EvidenceStore } from "../store/store.ts";
import { isSqliteUri, sqlitePath } from "../store/store_uri.ts";

/** How a store is opened. */
export interface OpenStoreOptions {
  /** The runs root, where run folders are made. */
  runs?: string;
  /** Open only to read: write nothing, refuse what does not exist. */
  readOnly?: boolean;
}

/**
 * The store of a store URI: `file` is the file store; `sqlite:///relative.db` and `sqlite:////absolute.db`
 * are the sqlite store (a relative path is fixed against the current folder now, `~` is the home folder);
 * `postgresql://user@host:port/database` is the postgres store (the password from the URI, `PGPASSWORD` or
 * `~/.pgpass`).
 *
 * @param uri The store URI.
 * @param options The runs root, and whether to open only to read (a sqlite store then opens with
 * `create: false`).
 * @returns The store; close it when done.
 * @throws ProveviError for a URI that names no store, or a sqlite file that cannot be used.
 * @example
 * ```ts
 * import { openStore } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * await using store = await openStore("file", { runs: "fixtures/runs" });
 * assert.deepEqual(await store.runIds(), ["run-20261129T120000Z-0badc0de"]);
 * ```
 */
export function openStore(uri: string, options: OpenStoreOptions = {}): Promise<EvidenceStore> {
  const runs = options.runs === undefined ? {} : { runs: options.runs };
  try {
    if (uri === "file" || uri === "file:") return Promise.resolve(new FileStore(runs));
    if (isSqliteUri(uri)) {
      return Promise.resolve(
        new SqliteStore(sqlitePath(uri), { ...runs, uri, create: !options.readOnly }),
      );
    }
    if (isPostgresUri(uri)) return PostgresStore.open(uri, { ...runs, create: !options.readOnly });
  } catch (error) {
    return Promise.reject(error);
  }
  return Promise.reject(
    new ProveviError(
      `store URI "${
        redactUri(uri)
      }" names no store: use file, sqlite:///relative.db, sqlite:////absolute.db or postgresql://user@host:port/database`,
    ),
  );
}
