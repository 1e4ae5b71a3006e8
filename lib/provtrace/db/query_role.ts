/**
 * The query role: the main thread of the process that answers one `provtrace query` within its time limit. It
 * is provtrace itself in a hidden role, so a compiled provtrace needs nothing beside it (no `deno` on the
 * PATH): a compiled provtrace starts itself again with {@linkcode QUERY_ROLE_ARG} (cli/provtrace.ts checks it
 * first), and provtrace from source starts this module under `deno run` with read access to the one file. The
 * same code answers in both ways.
 *
 * A compiled binary's flags are fixed and broad, so the role narrows itself: it opens the file read-only, then
 * revokes every permission it has (read, write, net, env, run, ffi, sys) before it prepares the statement.
 * What SQLite reads through the open connection needs no permission; anything else the process tried would
 * meet `NotCapable`. The statement itself may only read (`_query_answer.ts`).
 *
 * Line in: the request, `{ db, sql, params }`, as JSON, then the end of stdin. Lines out, each JSON:
 * `{ columns }`, each row as a list of values, then `{ end: true, kept }` (the permissions it still held:
 * none, which the caller checks), or `{ error, own }`. The caller kills the
 * process at its time limit, or when the answer passes its size bound.
 * @module
 */
import { answerQuery, type QueryRequest } from "./_query_answer.ts";

/** The argument that starts a compiled provtrace as the process that answers a query. */
export const QUERY_ROLE_ARG = "--provtrace-query-process";

const encoder = new TextEncoder();

/** Each item as a JSON line, written whole: writing blocks while the reader is behind, so its bound holds. */
function emit(item: unknown): void {
  const bytes = encoder.encode(JSON.stringify(item) + "\n");
  for (let n = 0; n < bytes.length;) n += Deno.stdout.writeSync(bytes.subarray(n));
}

const NAMES = ["read", "write", "net", "env", "run", "ffi", "sys"] as const;

/** Every permission this process holds, given up: the open connection is all it keeps. */
function revokeAll(): void {
  for (const name of NAMES) Deno.permissions.revokeSync({ name });
}

/**
 * The permissions this process still holds, for anything or for the file: none once {@linkcode revokeAll} ran
 * (a revoked permission reads `prompt` or `denied`; with `--no-prompt` both refuse).
 */
function kept(db: string): string[] {
  const held = (descriptor: Deno.PermissionDescriptor) =>
    Deno.permissions.querySync(descriptor).state === "granted";
  return NAMES.filter((name) =>
    held({ name }) || ((name === "read" || name === "write") && held({ name, path: db }))
  );
}

/**
 * Answers the one request on stdin, then ends the process.
 *
 * @example
 * ```ts ignore
 * // cli/provtrace.ts, first of all: a compiled provtrace started as the query's process answers and ends.
 * if (Deno.args[0] === QUERY_ROLE_ARG) await serveQueryRole();
 * ```
 */
export async function serveQueryRole(): Promise<never> {
  let code = 0;
  try {
    const request = JSON.parse(await new Response(Deno.stdin.readable).text()) as QueryRequest;
    if (
      typeof request?.db !== "string" || typeof request.sql !== "string" || !Array.isArray(request.params)
    ) {
      throw new TypeError("the request is not { db, sql, params }");
    }
    answerQuery(request, { emit, opened: revokeAll });
    emit({ end: true, kept: kept(request.db) });
  } catch (error) {
    const e = error as Error;
    emit({ error: String(e?.message ?? e).split("\n")[0], own: e?.name === "QueryRefused" });
    code = 1;
  }
  Deno.exit(code);
}

if (import.meta.main) await serveQueryRole();
