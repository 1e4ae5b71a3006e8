/**
 * Starts MLflow's own server (`mlflow server`) on a database, on a free port of 127.0.0.1, for the copy into a
 * database or the sqlite store's own file, and for MLflow's viewer. The copy never writes MLflow's tables
 * itself; this server does, through MLflow's own code.
 * @module
 */
import { delimiter, dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ProveviError } from "../evidence/errors.ts";
import { concatBytes } from "../evidence/bytes.ts";
import { shownEndpoint } from "../telemetry/endpoint.ts";
import type { Environ } from "../telemetry/otlp_target.ts";

/** The MLflow version the copy is tested with; the one the install hint names. */
export const MLFLOW_VERSION = "3.17.2";

/** The variables of the shell that a started MLflow server gets; no `MLFLOW_` or `OTEL_` one among them. */
const PASSED = ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "USERPROFILE"];

/** Options of {@linkcode startMlflowServer}. */
export interface MlflowServerOptions {
  /** The shell's variables: `PATH` finds `mlflow`. */
  environ: Environ;
  /** The `mlflow` program; else `mlflow` on the `PATH`. */
  program?: string;
  /** Where MLflow's artifacts go (a folder next to the SQLite file for the store's own file). */
  artifacts: string;
  /** The port; else a free one. */
  port?: number;
  /** How long to wait for the server to answer, in milliseconds (300 s by default). */
  wait?: number;
  /** Where the server's output goes; else it is kept for the error message only. */
  log?: string;
}

/** A running MLflow server, stopped when disposed. */
export interface MlflowServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** The process ID of `mlflow server`. */
  readonly pid: number;
  /** Stops the server and waits for it to end. */
  close(): Promise<void>;
}

/**
 * The `mlflow` program on a `PATH`, or null.
 *
 * @param path The `PATH` variable's value.
 * @returns The program's path.
 */
export async function findMlflow(path: string | undefined): Promise<string | null> {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    for (const name of Deno.build.os === "windows" ? ["mlflow.exe", "mlflow.cmd"] : ["mlflow"]) {
      try {
        const info = await Deno.stat(join(dir, name));
        if (info.isFile) return join(dir, name);
      } catch { /* not here */ }
    }
  }
  return null;
}

/** A free TCP port of 127.0.0.1. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/**
 * Puts a SQLite file in WAL mode before MLflow opens it, as the seeds ask: provevi's store reads it at the
 * same time. A file that does not exist yet is left for MLflow to make.
 */
async function walMode(backend: string): Promise<void> {
  const m = /^sqlite(?:\+[a-z0-9_]+)?:\/\/\/(.+)$/i.exec(backend);
  if (!m) return;
  const path = m[1]!;
  try {
    await Deno.stat(path);
  } catch {
    return;
  }
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA journal_mode=WAL");
  } finally {
    db.close();
  }
}

/**
 * Starts `mlflow server` on a database URL, on 127.0.0.1, with none of the shell's `MLFLOW_` or `OTEL_`
 * variables, MLflow's usage telemetry and its note to coding agents off, no proxy, and LiteLLM kept out (MLflow
 * prices model calls with it if it can import it, and importing it fetches a price table from the network).
 *
 * @param backend The database URL: `sqlite:////abs/file.db`, `postgresql://…`, `mysql://…`.
 * @param options The variables, the program, the artifacts folder, the port.
 * @returns The running server; dispose of it to stop it.
 * @throws ProveviError when `mlflow` is not installed, or the server ends or does not answer in time (the
 *   message holds no password).
 * @example
 * ```ts
 * import { startMlflowServer } from "./mlflow_server.ts";
 * // await using server = await startMlflowServer("sqlite:////tmp/x.db", { environ: Deno.env.toObject(), artifacts: "/tmp/x-artifacts" });
 * ```
 */
export async function startMlflowServer(
  backend: string,
  options: MlflowServerOptions,
): Promise<MlflowServer> {
  const program = options.program ?? await findMlflow(options.environ.PATH);
  if (program === null) {
    throw new ProveviError(
      `cannot start MLflow for ${shownEndpoint(backend)}: no mlflow program on the PATH; install it with ` +
        `\`pip install mlflow==${MLFLOW_VERSION}\` (or \`uv tool install mlflow==${MLFLOW_VERSION}\`) and put its bin folder on the PATH`,
    );
  }
  await walMode(backend);
  await Deno.mkdir(options.artifacts, { recursive: true });
  const keepOut = await Deno.makeTempDir({ prefix: "provevi-mlflow-" });
  await Deno.writeTextFile(
    join(keepOut, "litellm.py"),
    'raise ImportError("provevi keeps LiteLLM out of the copy in MLflow: importing it fetches a price table")\n',
  );
  const env = {
    ...mlflowEnv(options.environ, keepOut),
    // Given by variable, not on the command line, so that a database password stays out of `ps`.
    MLFLOW_BACKEND_STORE_URI: backend,
  };
  const port = options.port ?? freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args: [
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        String(port),
        "--artifacts-destination",
        options.artifacts,
        "--workers",
        "1",
      ],
      env,
      clearEnv: true,
      cwd: dirname(options.artifacts),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    await Deno.remove(keepOut, { recursive: true }).catch(() => {});
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      throw new ProveviError(
        `cannot start MLflow's server (${program}) for ${
          shownEndpoint(backend)
        }: the process may not run it; ` +
          "allow it with --allow-run=mlflow (deno task prove-mlflow does)",
        { cause: error },
      );
    }
    throw new ProveviError(`cannot start MLflow's server (${program}): ${(error as Error).message}`, {
      cause: error,
    });
  }
  const watched = watch(child, {
    secret: passwordOf(backend),
    keepOut,
    ...(options.log ? { log: options.log } : {}),
  });
  await waitForHealth(url, watched, { backend, wait: options.wait ?? 300_000 });
  const close = watched.close;
  return { url, port, pid: child.pid, close, [Symbol.asyncDispose]: close };
}

/** A started server's output (its last lines, without the password) and how to stop it. */
interface Watched {
  output: string[];
  ended(): boolean;
  close(): Promise<void>;
}

/** Keeps a started server's last lines of output, and stops it (TERM, then KILL after 10 s) on close. */
function watch(
  child: Deno.ChildProcess,
  options: { secret: string | null; keepOut: string; log?: string },
): Watched {
  const output: string[] = [];
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const file = options.log ? await Deno.open(options.log, { append: true, create: true }) : null;
    try {
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        const clean = options.secret ? chunk.replaceAll(options.secret, "…") : chunk;
        output.push(clean);
        if (output.length > 200) output.shift();
        if (file) await file.write(new TextEncoder().encode(clean));
      }
    } catch {
      /* the server ended */
    } finally {
      file?.close();
    }
  };
  const reading = Promise.all([collect(child.stdout), collect(child.stderr)]);
  let ended = false;
  const status = child.status.then((s) => {
    ended = true;
    return s;
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    if (!ended) {
      try {
        child.kill("SIGTERM");
      } catch { /* it ended */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* it ended */ }
      }, 10_000);
      await status;
      clearTimeout(timer);
    }
    await reading;
    await Deno.remove(options.keepOut, { recursive: true }).catch(() => {});
  };
  return { output, ended: () => ended, close };
}

/** Waits until the server answers `/health`; stops it and says why when it ends first or does not answer. */
async function waitForHealth(
  url: string,
  server: Watched,
  options: { backend: string; wait: number },
): Promise<void> {
  const until = Date.now() + options.wait;
  while (true) {
    if (server.ended()) {
      await server.close();
      const last = server.output.join("").trim().split("\n").filter((l) => l.trim()).slice(-1)[0] ??
        "no output";
      throw new ProveviError(
        `MLflow's server on ${shownEndpoint(options.backend)} ended as it started: ${
          last.trim().slice(0, 300)
        }`,
      );
    }
    try {
      const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      if (response.ok) return;
    } catch { /* not yet */ }
    if (Date.now() >= until) {
      await server.close();
      throw new ProveviError(
        `MLflow's server on ${shownEndpoint(options.backend)} did not answer at ${url} in ${
          Math.round(options.wait / 1000)
        } s`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The variables of an `mlflow` program the copy starts: the shell's few that it needs, and none of its
 * `MLFLOW_` or `OTEL_` ones; usage telemetry and the note to coding agents off, no proxy, LiteLLM kept out.
 */
function mlflowEnv(environ: Environ, keepOut: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED) {
    const value = environ[name];
    if (value !== undefined) env[name] = value;
  }
  return Object.assign(env, {
    PYTHONPATH: keepOut,
    NO_PROXY: "*",
    no_proxy: "*",
    MLFLOW_DISABLE_AGENT_HINT: "1",
    MLFLOW_DISABLE_TELEMETRY: "true",
    DO_NOT_TRACK: "true",
    // MLflow's job runner (scorers, evaluations) is no part of a copy, and costs a process.
    MLFLOW_SERVER_ENABLE_JOB_EXECUTION: "false",
  });
}

/**
 * Deletes runs that were marked deleted for good from a database, with MLflow's own `mlflow gc` (their
 * metrics, params, tags and artifacts go with them), as the seed asks of a copy made again into a database.
 * MLflow's gc keeps a deleted run's input links and the datasets they name: no MLflow command or API deletes
 * those, and the copy writes no MLflow table itself.
 *
 * `mlflow gc` takes the database only on its command line, where `ps` shows it: a Postgres password goes in
 * `PGPASSWORD` instead, and a database with another kind of password is left to its owner (the runs stay
 * marked deleted, and the error says so). It runs while the copy's server does, which it asks to delete the
 * runs' artifacts.
 *
 * @param backend The database URL.
 * @param runIds The MLflow runs, already marked deleted.
 * @param options The variables (`PATH` finds `mlflow`), the program, and the URL of the server on the database.
 * @throws ProveviError when the runs cannot be deleted for good (the last line of `mlflow gc`, without the
 *   password).
 * @example
 * ```ts
 * import { purgeDeletedRuns } from "./mlflow_server.ts";
 * // await purgeDeletedRuns("sqlite:////tmp/x.db", ["0123…"], { environ: Deno.env.toObject(), server: url });
 * ```
 */
export async function purgeDeletedRuns(
  backend: string,
  runIds: readonly string[],
  options: { environ: Environ; program?: string; server: string },
): Promise<void> {
  if (runIds.length === 0) return;
  const stay = `the earlier copies ${runIds.join(", ")} stay marked deleted in ${shownEndpoint(backend)}`;
  const program = options.program ?? await findMlflow(options.environ.PATH);
  if (program === null) throw new ProveviError(`${stay}: no mlflow program on the PATH to delete them with`);
  const given = gcDatabase(backend);
  if (given === null) {
    throw new ProveviError(
      `${stay}: mlflow gc takes the database only on its command line, where its password would show; run mlflow gc --run-ids ${
        runIds.join(",")
      } where that is safe`,
    );
  }
  const keepOut = await Deno.makeTempDir({ prefix: "provevi-mlflow-" });
  try {
    await Deno.writeTextFile(join(keepOut, "litellm.py"), 'raise ImportError("kept out")\n');
    // its output is not read, and of its errors only the last 64 KiB are kept: a program that writes without
    // end (a loop that logs) held them whole
    const child = new Deno.Command(program, {
      args: ["gc", "--backend-store-uri", given.url, "--run-ids", runIds.join(",")],
      env: { ...mlflowEnv(options.environ, keepOut), ...given.env, MLFLOW_TRACKING_URI: options.server },
      clearEnv: true,
      cwd: keepOut,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const errors = await tailOf(child.stderr, 64 * 1024);
    if (!(await child.status).success) {
      const secret = passwordOf(backend);
      const text = new TextDecoder().decode(errors);
      const last = (secret ? text.replaceAll(secret, "…") : text).trim().split("\n").at(-1) ?? "";
      throw new ProveviError(`${stay}: mlflow gc failed: ${last.slice(0, 300)}`);
    }
  } finally {
    await Deno.remove(keepOut, { recursive: true }).catch(() => {});
  }
}

/**
 * The database URL as `mlflow gc`'s command line may show it, and the variables that carry its password; null
 * when its password has no such variable.
 */
function gcDatabase(backend: string): { url: string; env: Record<string, string> } | null {
  if (/[?&]password=/i.test(backend)) return null;
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/@:]*):([^/@]*)@(.*)$/i.exec(backend);
  if (m === null) return { url: backend, env: {} };
  if (!/^postgres(ql)?(\+[a-z0-9_]+)?:\/\/$/i.test(m[1]!)) return null;
  return { url: `${m[1]}${m[2]}@${m[4]}`, env: { PGPASSWORD: decodeURIComponent(m[3]!) } };
}

/** The last `max` bytes of a stream, read to its end: the chunks that hold them are kept, no more. */
async function tailOf(stream: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array> {
  const kept: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    kept.push(chunk);
    size += chunk.length;
    while (size - kept[0]!.length >= max) size -= kept.shift()!.length;
  }
  const all = concatBytes(kept);
  return all.subarray(Math.max(0, all.length - max));
}

function passwordOf(url: string): string | null {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/@:]*:([^/@]+)@/i.exec(url);
  if (!m || m[1]!.length < 3) return null;
  return m[1]!;
}
