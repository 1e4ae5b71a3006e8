/**
 * Starts MLflow's own server (`mlflow server`) on a database, on a free port of 127.0.0.1, for the copy into a
 * database or the sqlite store's own file, and for MLflow's viewer. The copy never writes MLflow's tables
 * itself; this server does, through MLflow's own code.
 * @module
 */
import { delimiter, dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ProveviError } from "../evidence/errors.ts";
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
  const env: Record<string, string> = {};
  for (const name of PASSED) {
    const value = options.environ[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, {
    PYTHONPATH: keepOut,
    NO_PROXY: "*",
    no_proxy: "*",
    MLFLOW_DISABLE_AGENT_HINT: "1",
    MLFLOW_DISABLE_TELEMETRY: "true",
    DO_NOT_TRACK: "true",
    // MLflow's job runner (scorers, evaluations) is no part of a copy, and costs a process.
    MLFLOW_SERVER_ENABLE_JOB_EXECUTION: "false",
    // Given by variable, not on the command line, so that a database password stays out of `ps`.
    MLFLOW_BACKEND_STORE_URI: backend,
  });
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
  const output: string[] = [];
  const secret = passwordOf(backend);
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const file = options.log ? await Deno.open(options.log, { append: true, create: true }) : null;
    try {
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        const clean = secret ? chunk.replaceAll(secret, "…") : chunk;
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
    await Deno.remove(keepOut, { recursive: true }).catch(() => {});
  };
  const until = Date.now() + (options.wait ?? 300_000);
  while (true) {
    if (ended) {
      await close();
      const last = output.join("").trim().split("\n").filter((l) => l.trim()).slice(-1)[0] ?? "no output";
      throw new ProveviError(
        `MLflow's server on ${shownEndpoint(backend)} ended as it started: ${last.trim().slice(0, 300)}`,
      );
    }
    try {
      const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      if (response.ok) break;
    } catch { /* not yet */ }
    if (Date.now() >= until) {
      await close();
      throw new ProveviError(
        `MLflow's server on ${shownEndpoint(backend)} did not answer at ${url} in ${
          Math.round((options.wait ?? 300_000) / 1000)
        } s`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { url, port, pid: child.pid, close, [Symbol.asyncDispose]: close };
}

function passwordOf(url: string): string | null {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/@:]*:([^/@]+)@/i.exec(url);
  if (!m || m[1]!.length < 3) return null;
  return m[1]!;
}
