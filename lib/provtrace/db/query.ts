/**
 * A question in SQL to a trace database: one statement that only reads, every `?` given a value, answered in
 * a Deno process of its own that is killed at a time limit (30 s by default), with the answer's size bounded.
 *
 * A process, because nothing else stops SQLite: `node:sqlite` has no progress handler or interrupt, and a
 * Worker's `terminate()` does not stop a statement running in native code (a recursive CTE kept its thread
 * busy, and the process alive, after it). The process is provtrace itself in its query role (`query_role.ts`):
 * a compiled provtrace starts itself again (`Deno.execPath()`), so it stands alone; from source, this process's
 * own Deno (else `deno` on the PATH) runs the role's module with read access to the one file. The role opens
 * the file read-only and then gives up every permission it has.
 * @module
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ProveviError } from "../../provevi/evidence/mod.ts";
import { openTraceDb } from "./trace_db.ts";
import { answerQuery } from "./_query_answer.ts";
import { QUERY_ROLE_ARG } from "./query_role.ts";

const ROLE_URL = new URL("./query_role.ts", import.meta.url);

/** The answer to {@linkcode queryTrace}: the columns in order, and the rows. */
export interface TraceQueryResult {
  columns: string[];
  rows: Record<string, unknown>[];
}

/** How {@linkcode queryTrace} asks. */
export interface TraceQueryOptions {
  /** The values of the statement's `?` placeholders, in order; each is text. */
  params?: readonly string[];
  /** The time limit in milliseconds (30,000 by default); 0 runs the statement in this process, with none. */
  timeout?: number;
  /** The largest answer read, in bytes of JSON (256 MiB by default). */
  maxBytes?: number;
  /**
   * Start this program in the query role, with this command: a compiled provtrace's is `[Deno.execPath()]`,
   * the default when this process is compiled; the tests give `deno run` with the compiled binary's flags on
   * cli/provtrace.ts. Else (`null`, the default from source) `deno run` on the role's module.
   */
  self?: string[] | null;
}

/** The default time limit of a question, in milliseconds. */
export const TRACE_QUERY_TIMEOUT = 30_000;

const MAX_BYTES = 256 * 1024 * 1024;

/**
 * Asks a trace database one question in SQL, on a read-only connection, within a time limit.
 *
 * @param db The trace database's file.
 * @param sql One statement that reads, such as a `SELECT`; `?` for each value of `params`.
 * @param options The placeholders' values, the time limit, the bound on the answer's size.
 * @returns The columns and rows.
 * @throws ProveviError for a database that cannot be opened, SQL that SQLite refuses (with its message), more
 * than one statement, one that would write, a placeholder without a value (or a value too many), a question
 * past its time limit or an answer past its size, or no Deno to answer in.
 * @example
 * ```ts
 * import { buildTrace, queryTrace } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const db = `${await Deno.makeTempDir()}/trace.db`;
 * await buildTrace({ store: "file", runs: "fixtures/runs", db });
 * const { rows } = await queryTrace(db, "SELECT run_id FROM trace_runs WHERE run_id = ?", {
 *   params: ["run-20261129T120000Z-0badc0de"],
 * });
 * assert.equal(rows.length, 1);
 * ```
 */
export async function queryTrace(
  db: string,
  sql: string,
  options: TraceQueryOptions = {},
): Promise<TraceQueryResult> {
  const timeout = options.timeout ?? TRACE_QUERY_TIMEOUT;
  if (!Number.isFinite(timeout) || timeout < 0) throw new RangeError(`timeout ${timeout} is not 0 or more`);
  { // The file's own checks (WAL, schema version), with their fixes, before any process starts.
    using _ = openTraceDb(db);
  }
  const request = { db: resolve(db), sql, params: [...(options.params ?? [])] };
  const fail = (why: string, cause?: unknown) =>
    new ProveviError(`the query cannot be run on "${db}": ${why}`, cause ? { cause } : undefined);
  const items: unknown[] = [];
  if (timeout === 0) {
    try {
      answerQuery(request, { emit: (item) => items.push(item) });
    } catch (error) {
      const e = error as Error;
      throw fail(
        e.name === "QueryRefused" ? e.message : `${e.message}; see docs/provtrace.md for the tables`,
        e,
      );
    }
    return answerOf(items);
  }
  const answer = await answerElsewhere(request, { ...options, timeout });
  if ("error" in answer) {
    throw fail(answer.own ? answer.error : `${answer.error}; see docs/provtrace.md for the tables`);
  }
  return answerOf(answer.items);
}

/** The items of an answer as columns and rows keyed by column, with blobs and odd numbers back as they were. */
function answerOf(items: unknown[]): TraceQueryResult {
  const [head, ...rest] = items as [{ columns: string[] }, ...unknown[][]];
  const columns = head.columns;
  const rows = rest.map((values) => {
    const row: Record<string, unknown> = {};
    columns.forEach((c, i) => {
      const v = values[i] as unknown;
      row[c] = typeof v === "object" && v !== null
        ? ("blob" in v
          ? Uint8Array.from((v.blob as string).match(/../g) ?? [], (h) => parseInt(h, 16))
          : Number((v as { number: string }).number))
        : v;
    });
    return row;
  });
  return { columns, rows };
}

/** Runs the question in a Deno process of its own, killed at the time limit or past the size bound. */
async function answerElsewhere(
  request: { db: string; sql: string; params: string[] },
  options: TraceQueryOptions & { timeout: number },
): Promise<{ items: unknown[] } | { error: string; own: boolean }> {
  const launch = launchFor(request.db, options.self !== undefined ? options.self : compiledSelf());
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(launch.program, {
      args: launch.args,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    throw new ProveviError(
      `provtrace query answers in a process of its own that it stops at its time limit, and cannot start "${launch.program}" (${
        (error as Error).name
      }): ${launch.fix}, or give --timeout 0 to answer without a limit`,
      { cause: error },
    );
  }
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch { /* it ended */ }
  };
  let stopped: string | null = null;
  const timer = setTimeout(() => {
    stopped = `the query ran for more than ${
      options.timeout / 1000
    } s and was stopped; narrow it, or give a longer --timeout SECONDS (0: no limit)`;
    kill();
  }, options.timeout);
  try {
    // A process that ended at once (it could not start) has closed its input: what it printed says why.
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(JSON.stringify(request))).catch(() => {});
    await writer.close().catch(() => {});
    const errors = new Response(child.stderr).text().catch(() => "");
    const maxBytes = options.maxBytes ?? MAX_BYTES;
    const read = await readItems(child.stdout, maxBytes);
    if (read.tooLarge) {
      stopped ??= `the answer is larger than ${
        Math.round(maxBytes / 1024 / 1024)
      } MiB and was stopped; narrow the query (a LIMIT, fewer columns)`;
      kill();
    }
    await child.status;
    if (stopped !== null) return { error: stopped, own: true };
    if (read.error !== null) return read.error;
    if (!read.ended) {
      const last = (await errors).trim().split("\n").at(-1) ?? "";
      return {
        error: `the process that answers ended early${last ? `: ${last.slice(0, 300)}` : ""}`,
        own: true,
      };
    }
    return { items: read.items };
  } finally {
    clearTimeout(timer);
    kill();
  }
}

/** The JSON lines of the answering process, up to a bound: its items, its end, or its error. */
async function readItems(stdout: ReadableStream<Uint8Array>, maxBytes: number): Promise<{
  items: unknown[];
  ended: boolean;
  error: { error: string; own: boolean } | null;
  tooLarge: boolean;
}> {
  const out = { items: [] as unknown[], ended: false, error: null as { error: string; own: boolean } | null };
  let size = 0, pending = "";
  for await (const chunk of stdout.pipeThrough(new TextDecoderStream())) {
    size += chunk.length;
    if (size > maxBytes) return { ...out, tooLarge: true };
    const lines = (pending + chunk).split("\n");
    pending = lines.pop()!;
    for (const line of lines) {
      let item: unknown;
      try {
        item = JSON.parse(line);
      } catch {
        out.error ??= {
          error: `the process that answers wrote a line that is not JSON: ${line.slice(0, 100)}`,
          own: true,
        };
        continue;
      }
      if (typeof item === "object" && item !== null && !Array.isArray(item) && "end" in item) {
        out.ended = true;
        const kept = "kept" in item && Array.isArray(item.kept) ? item.kept : ["(not said)"];
        if (kept.length) {
          out.error ??= {
            error: `the process that answers kept permissions it must give up (${kept.join(", ")})`,
            own: true,
          };
        }
      } else if (typeof item === "object" && item !== null && !Array.isArray(item) && "error" in item) {
        out.error = { error: String(item.error), own: "own" in item && item.own === true };
      } else out.items.push(item);
    }
  }
  return { ...out, tooLarge: false };
}

/** A compiled provtrace's own command; none from source. */
function compiledSelf(): string[] | null {
  return Deno.build.standalone === true ? [Deno.execPath()] : null;
}

/** The program and arguments of the process that answers, and what to do when it cannot be started. */
function launchFor(db: string, self: string[] | null): { program: string; args: string[]; fix: string } {
  if (self) {
    const [program = Deno.execPath(), ...rest] = self;
    return {
      program,
      args: [...rest, QUERY_ROLE_ARG],
      fix: "a compiled provtrace may start itself by the name provtrace: put it on the PATH as provtrace",
    };
  }
  const remote = ROLE_URL.protocol === "https:" || ROLE_URL.protocol === "http:";
  return {
    program: answeringDeno(),
    args: [
      "run",
      "--no-prompt",
      "--no-config",
      "--no-lock",
      "--quiet",
      ...(remote ? [`--allow-import=${ROLE_URL.host}`] : []),
      `--allow-read=${db}`,
      ROLE_URL.protocol === "file:" ? fileURLToPath(ROLE_URL) : ROLE_URL.href,
    ],
    fix: "install Deno (https://deno.com) and put deno on the PATH",
  };
}

/** This process's own Deno where it may start it; else `deno` on the PATH. */
function answeringDeno(): string {
  try {
    const own = Deno.execPath();
    return Deno.permissions.querySync({ name: "run", command: own }).state === "granted" ? own : "deno";
  } catch {
    return "deno";
  }
}
