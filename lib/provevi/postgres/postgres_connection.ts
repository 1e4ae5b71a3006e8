/**
 * Opening a postgres store: a pool of `npm:postgres` connections to the URI's server, the schema brought up
 * to date one step at a time under an advisory lock (to write) or checked (to read), and errors that name the
 * server and database, never the password.
 * @module
 */
import { isIP } from "node:net";
import tls from "node:tls";
import type postgres from "postgres";
import { ProveviError } from "../evidence/errors.ts";
import type { PostgresTarget } from "./postgres_uri.ts";
import {
  applyPostgresStep,
  POSTGRES_SCHEMA_STEPS,
  POSTGRES_SCHEMA_VERSION,
  postgresSchemaProblems,
  postgresSchemaVersion,
} from "./postgres_schema.ts";

/** The advisory lock that serialises schema upgrades across processes and machines. */
const UPGRADE_LOCK = 0x70726f76; // "prov"

/** How {@linkcode openPostgres} opens a store. */
export interface OpenPostgresOptions {
  /** Open only to read: refuse an empty database and another schema version; upgrade nothing. */
  readOnly: boolean;
  /** Connections in the pool; 4 by default. */
  max?: number;
}

/**
 * The SQLSTATE or driver code of an error from `npm:postgres`, such as `23505` or `ECONNREFUSED`.
 *
 * @param error Any thrown value.
 */
export function pgCode(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : "";
}

/**
 * True when the error means the connection to the server was lost or could not be made, so the write may be
 * tried again once the server answers.
 *
 * @param error Any thrown value.
 */
export function isConnectionLoss(error: unknown): boolean {
  const code = pgCode(error);
  return /^(ECONN|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|CONNECTION_|CONNECT_TIMEOUT)/.test(code) ||
    /^(08|57P0)/.test(code) ||
    (error instanceof Error &&
      /connection (refused|reset|closed|ended)|ConnectionRefused/i.test(error.message));
}

/** The first line of an error's message. */
export function pgMessage(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}

/**
 * Opens a pool to the store's database, checked: it connects once, refuses a database of a newer provevi
 * before writing anything, brings an older one up to date (to write), and refuses a changed schema.
 *
 * @param target Where the store is, from {@linkcode postgresTarget}.
 * @param options Whether to open only to read.
 * @returns The pool; `end()` it when done.
 * @throws ProveviError naming the server, the database and the fix when the store cannot be used.
 * @example
 * ```ts
 * import { openPostgres } from "./postgres_connection.ts";
 * import { postgresTarget } from "./postgres_uri.ts";
 * const sql = await openPostgres(postgresTarget("postgresql://ada@127.0.0.1:5432/evidence"), { readOnly: false });
 * await sql.end();
 * ```
 */
export async function openPostgres(
  target: PostgresTarget,
  options: OpenPostgresOptions,
): Promise<postgres.Sql> {
  const fail = (why: string, cause?: unknown) =>
    new ProveviError(`cannot open store "${target.uri}": ${why}`, cause ? { cause } : undefined);
  const password = target.password ?? "";
  const ssl = tlsOptions(target, fail);
  // The driver is imported by the first store that opens: a run or a reader of a file store never pays for it.
  const { default: driver } = await import("postgres");
  // Every option is given, so that the driver reads no PG* variable of its own: the URI and the variables
  // that postgresTarget() read are the whole configuration.
  const sql = driver({
    host: target.hostaddr ?? target.host,
    port: target.port,
    database: target.database,
    user: target.user,
    pass: () => password,
    ssl,
    sslnegotiation: null,
    max: options.max ?? 4,
    idle_timeout: 60,
    connect_timeout: 10,
    max_lifetime: null,
    max_pipeline: 100,
    backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, 20),
    keep_alive: 60,
    prepare: true,
    debug: false,
    fetch_types: false,
    publications: "alltables",
    target_session_attrs: undefined,
    onnotice: () => {},
    connection: { application_name: "provevi" },
  } as postgres.Options<Record<string, never>>);
  try {
    try {
      await sql.unsafe("SELECT 1");
    } catch (error) {
      throw fail(`${connectionProblem(error, target)}`, error);
    }
    const newer = (version: number) =>
      fail(
        `the database has schema version ${version}, from a newer provevi; this one knows up to ${POSTGRES_SCHEMA_VERSION}: upgrade provevi`,
      );
    if (!options.readOnly) {
      await refuseNarrowEncoding(sql, target, fail);
      // A database of a newer provevi is refused before anything is written to it.
      const version = await postgresSchemaVersion(sql);
      if (version > POSTGRES_SCHEMA_VERSION) throw newer(version);
      if (version < POSTGRES_SCHEMA_VERSION) await upgrade(sql, target.uri);
    }
    const version = await postgresSchemaVersion(sql);
    if (version === 0) {
      throw fail(
        "the database holds no provevi evidence; pass the store that provr wrote, or open it once to write (provr run)",
      );
    }
    if (version > POSTGRES_SCHEMA_VERSION) throw newer(version);
    if (version < POSTGRES_SCHEMA_VERSION) {
      throw fail(
        `the database has schema version ${version}, and this provevi reads ${POSTGRES_SCHEMA_VERSION}; open it once to write to upgrade it`,
      );
    }
    const problems = await postgresSchemaProblems(sql);
    if (problems.length) {
      throw fail(`the schema was changed (${problems.join("; ")}); restore the database from a copy`);
    }
    return sql;
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    if (error instanceof ProveviError) throw error;
    throw fail(pgMessage(error), error);
  }
}

/**
 * The driver's `ssl` option for the target's `sslmode`, as libpq means it: `disable` sends no TLS request;
 * `allow`, `prefer` and `require` take TLS without checking the certificate (`allow` and `prefer` carry on
 * in plain text when the server offers no TLS); `verify-ca` checks that the root CA signed the server's
 * certificate, and `verify-full` also that the certificate is for the host of the URI.
 */
function tlsOptions(
  target: PostgresTarget,
  fail: (why: string) => ProveviError,
): false | "prefer" | "require" | tls.ConnectionOptions {
  if (target.sslmode === "disable") return false;
  // The driver's `allow` would refuse a server without TLS; libpq's takes it, so `allow` is taken as `prefer`.
  if (target.sslmode === "allow") return "prefer";
  if (!target.sslmode.startsWith("verify-")) return target.sslmode as "prefer" | "require";
  let ca: string | undefined;
  if (target.sslrootcert !== "system") {
    try {
      ca = Deno.readTextFileSync(target.sslrootcert!);
    } catch (error) {
      const why = error instanceof Deno.errors.NotFound ? "there is no such file" : pgMessage(error);
      throw fail(
        `sslmode ${target.sslmode} needs the root CA file "${target.sslrootcert}", and it cannot be read (${why}); give the CA that signed the server's certificate with ?sslrootcert=FILE or PGSSLROOTCERT, or sslrootcert=system for the system's roots`,
      );
    }
  }
  const host = target.host;
  return {
    ...(ca === undefined ? {} : { ca }),
    rejectUnauthorized: true,
    ...(isIP(host) ? {} : { servername: host }),
    checkServerIdentity: target.sslmode === "verify-full"
      ? (_name: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(host, cert)
      : () => undefined,
  };
}

/** Why a first connection failed, in words that say what to check. */
function connectionProblem(error: unknown, target: PostgresTarget): string {
  const code = pgCode(error);
  const where = `${target.host}:${target.port}`;
  if (code === "28000" && /no encryption/.test(pgMessage(error))) {
    return `the server at ${where} takes only TLS connections from user "${target.user}" (${
      pgMessage(error)
    }); use ?sslmode=prefer, require or verify-full`;
  }
  if (
    target.sslmode !== "prefer" && target.sslmode !== "allow" &&
    /before secure TLS connection/.test(pgMessage(error))
  ) {
    return `the server at ${where} does not offer TLS, and sslmode is ${target.sslmode} (${
      pgMessage(error)
    }); turn TLS on at the server (ssl = on), or use ?sslmode=prefer`;
  }
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return `the server's certificate is not for host "${target.host}" (${
      pgMessage(error)
    }); name the host that the certificate names, or use ?sslmode=verify-ca`;
  }
  if (/^(UNABLE_TO_|SELF_SIGNED|DEPTH_ZERO|CERT_|ERR_TLS_)/.test(code)) {
    return `the server's certificate at ${where} does not verify with the root CA ${
      target.sslrootcert === "system" ? "of the system" : `"${target.sslrootcert}"`
    } (${pgMessage(error)}); give the CA that signed it with ?sslrootcert=FILE or PGSSLROOTCERT`;
  }
  if (code === "28P01" || code === "28000") {
    return `the server refused user "${target.user}" (${
      pgMessage(error)
    }); give the password in the URI, PGPASSWORD or ~/.pgpass`;
  }
  if (code === "3D000") {
    return `the server at ${where} has no database "${target.database}"; create it (createdb ${target.database})`;
  }
  if (isConnectionLoss(error) || /^E[A-Z]+$/.test(code)) {
    return `cannot connect to the server at ${where} (${pgMessage(error)}); check that it runs and the URI`;
  }
  return pgMessage(error);
}

/**
 * Refuses to write to a database whose encoding cannot hold every character (LATIN1, WIN1252, …): a run whose
 * actor, a URI or a tool's name held one would lose every event written with it. UTF8 holds them all, and
 * SQL_ASCII keeps the bytes it is given.
 */
async function refuseNarrowEncoding(
  sql: postgres.Sql,
  target: PostgresTarget,
  fail: (why: string) => ProveviError,
): Promise<void> {
  const [row] = await sql.unsafe(
    "SELECT pg_encoding_to_char(encoding) AS name FROM pg_database WHERE datname = current_database()",
  );
  const name = String(row?.name ?? "UTF8");
  if (name === "UTF8" || name === "SQL_ASCII") return;
  throw fail(
    `the database's encoding is ${name}, which cannot hold every character a run records; make it with UTF8 (createdb -E UTF8 -T template0 ${target.database})`,
  );
}

/** Brings the database up to {@linkcode POSTGRES_SCHEMA_VERSION}, each step once, under the upgrade lock. */
async function upgrade(sql: postgres.Sql, uri: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx.unsafe(`SELECT pg_advisory_xact_lock(${UPGRADE_LOCK})`);
    let version = await postgresSchemaVersion(tx);
    if (version > POSTGRES_SCHEMA_VERSION) return; // the check after this reports it
    if (version === 0) {
      const [other] = await tx.unsafe(
        `SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace
           AND relname LIKE 'provevi\\_%' LIMIT 1`,
      );
      if (other) {
        throw new ProveviError(
          `cannot open store "${uri}": the database has provevi tables (${other.relname}) but no schema version; restore it from a copy`,
        );
      }
    }
    while (version < POSTGRES_SCHEMA_VERSION) {
      await applyPostgresStep(tx, POSTGRES_SCHEMA_STEPS.find((s) => s.version === version + 1)!);
      version += 1;
    }
  });
}
