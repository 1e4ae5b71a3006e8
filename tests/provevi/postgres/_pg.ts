/**
 * The PostgreSQL server of the tests: the one `.ci/peers/postgres.sh` starts, named by PROVEVI_TEST_PG_URL.
 * Each test makes its own database and drops it after. Its tests are `peerTest("postgres", …)`
 * (`tests/_peers.ts`): in CI a missing server fails them; elsewhere they are skipped.
 * @module
 */
import { cleanEnv } from "../../_children.ts";
import postgres from "postgres";

/** The server's URI (the `postgres` database), or null when no server was started. */
export const PG_URL: string | null = Deno.env.get("PROVEVI_TEST_PG_URL") ?? null;

/**
 * The server that only the restart test stops and starts (so that the tests beside it keep theirs), and the
 * command that does it; null outside CI when the peer was not started.
 */
export const PG_RESTART: { url: string; ctl: string } | null = (() => {
  const url = Deno.env.get("PROVEVI_TEST_PG_RESTART_URL");
  const ctl = Deno.env.get("PROVEVI_TEST_PG_CTL");
  if (!url || !ctl) return null;
  return { url, ctl };
})();

/**
 * The server that takes TLS only (a certificate for "localhost" signed by `ca`; `otherCa` signed nothing of
 * it), trusting the user postgres over TLS and asking every other user for a password (scram-sha-256); null
 * outside CI when the peer was not started.
 */
export const PG_TLS: { url: string; ca: string; otherCa: string } | null = (() => {
  const url = Deno.env.get("PROVEVI_TEST_PG_TLS_URL");
  const ca = Deno.env.get("PROVEVI_TEST_PG_TLS_CA");
  const otherCa = Deno.env.get("PROVEVI_TEST_PG_TLS_OTHER_CA");
  if (!url || !ca || !otherCa) return null;
  return { url, ca, otherCa };
})();

/** The shared server's URI; fails a test that reaches for it without the peer (not declared with peerTest). */
function needPg(): string {
  if (PG_URL === null) {
    throw new Error("PROVEVI_TEST_PG_URL is unset: .ci/peers/postgres.sh starts the server");
  }
  return PG_URL;
}

/** A pool to a server's maintenance database, for CREATE and DROP DATABASE. */
function admin(server: string): postgres.Sql {
  return postgres(server, { max: 1, onnotice: () => {}, fetch_types: false });
}

/**
 * A new database of its own: its store URI and a function that drops it.
 * @param server The server's URI; the shared test server by default.
 */
export async function freshDatabase(
  server: string = needPg(),
): Promise<{ uri: string; drop: () => Promise<void> }> {
  const name = `provevi_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const sql = admin(server);
  try {
    await sql.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await sql.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    uri: url.href,
    drop: async () => {
      const sql = admin(server);
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await sql.end();
      }
    },
  };
}

/** Runs SQL of one's own against a store's database (to change or delete a row, as an attacker would). */
export async function onDatabase<T>(uri: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(uri, { max: 1, onnotice: () => {}, fetch_types: false });
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}

/** What a command printed, and its exit code. */
export interface TaskResult {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs `deno task NAME` as deno.json writes it (its own permission flags and `--no-prompt`), with these
 * arguments, in a child process whose environment is this one's PATH, HOME, DENO_DIR, TMPDIR and LANG, and the
 * given variables: nothing else, since other test files running in this process set variables for a while
 * (MLFLOW_TRACKING_URI, …) that a child must not take.
 */
export async function task(
  name: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<TaskResult> {
  const config = JSON.parse(await Deno.readTextFile(new URL("../../../deno.json", import.meta.url)));
  const words = (config.tasks[name] as string).split(" ").slice(1); // drop "deno"
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...words, ...args],
    cwd: new URL("../../../", import.meta.url).pathname,
    clearEnv: true,
    env: { ...cleanEnv(), ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b).trim();
  return { code: out.code, out: text(out.stdout), err: text(out.stderr) };
}
