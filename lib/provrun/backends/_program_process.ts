/**
 * An agent program's process, from its start to its end: started headless in its own process group (so that
 * what it starts is stopped with it, and the reaper kills the group if provr itself is killed), stopped by a
 * cancel or a limit (SIGTERM to the group, then SIGKILL), with `limits.tokens` and, for a program with no turn
 * limit of its own, `limits.steps` read from its session files as it runs.
 * @module
 */
import { ProveviError } from "../../provevi/evidence/mod.ts";
import { CancelledError } from "../run/errors.ts";
import { errorMessage } from "../run/recorder.ts";
import type { AgentSpec } from "../run/run_file.ts";
import { forgetProcess, stopGroup, watchProcess } from "../sandbox/reaper.ts";
import type { ProgramSteps } from "./_program_files.ts";

/** What this file needs of a program's launch (`ProgramLaunch` of program_backend.ts). */
export interface ProgramCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  tokens(): Promise<number>;
  steps?(): Promise<ProgramSteps>;
}

/**
 * The most bytes kept of each of a program's standard output and error. A program that writes more is stopped
 * and its run fails: provr held all it wrote (a gigabyte of output took a gigabyte and more of provr's memory).
 */
export const PROGRAM_OUTPUT_MAX_BYTES = 64 * 1024 * 1024;

/** How often a program's session files are read for `limits.tokens`. */
const TOKEN_POLL_MS = 250;

/** How a program's process ended. */
export interface ProgramExit {
  /** Its exit and output. */
  out: Deno.CommandOutput;
  /** The token limit it passed, or the output it wrote past {@linkcode PROGRAM_OUTPUT_MAX_BYTES}, when it did. */
  overLimit: ProveviError | null;
  /** True when provr stopped it at `limits.steps`. */
  stepLimited: boolean;
}

/**
 * Runs a program to its end.
 *
 * @param launch Its command, arguments, environment and session files.
 * @param options The backend's name, the run folder, the agent's limits and the run's signal.
 * @returns How it ended.
 * @throws ProveviError when the program cannot be started.
 */
export async function runProgram(
  launch: ProgramCommand,
  options: { backend: string; cwd: string; limits: AgentSpec["limits"]; signal: AbortSignal },
): Promise<ProgramExit> {
  const child = spawn(launch, options);
  const group = child.pid;
  watchProcess(-group);
  const stopper = new Stopper(child);
  const stop = () => stopper.stop();
  options.signal.addEventListener("abort", stop, { once: true });
  const watch = new LimitWatch(launch, { limits: options.limits, stop });
  let over: ProveviError | null = null;
  const tooMuch = (stream: string) => {
    over ??= new ProveviError(
      `${options.backend} wrote more than ${PROGRAM_OUTPUT_MAX_BYTES} bytes to its ${stream}, more than provr keeps; ` +
        `it was stopped`,
    );
    stop();
  };
  const out = await outputOf(child, tooMuch).finally(() => watch.end());
  options.signal.removeEventListener("abort", stop);
  stopper.end();
  // what the program left running (a command a tool started in the background) ends with it
  await stopGroup(group, 1000);
  forgetProcess(-group);
  await watch.lastRead();
  return { out, overLimit: watch.overLimit ?? over, stepLimited: watch.stepLimited };
}

/** The program's exit and output, each stream kept to its first {@linkcode PROGRAM_OUTPUT_MAX_BYTES}. */
async function outputOf(
  child: Deno.ChildProcess,
  tooMuch: (stream: string) => void,
): Promise<Deno.CommandOutput> {
  const [stdout, stderr, status] = await Promise.all([
    keptBytes(child.stdout, () => tooMuch("standard output")),
    keptBytes(child.stderr, () => tooMuch("standard error")),
    child.status,
  ]);
  return { ...status, stdout, stderr };
}

/** The first bytes of a stream, up to the cap; past it, `over` is called once and the rest is read and dropped. */
async function keptBytes(
  stream: ReadableStream<Uint8Array>,
  over: () => void,
): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let passed = false;
  // the rest is drained, so that the program is not held on a full pipe until it is stopped
  for await (const chunk of stream) {
    if (passed) continue;
    if (size + chunk.byteLength > PROGRAM_OUTPUT_MAX_BYTES) {
      passed = true;
      over();
      continue;
    }
    chunks.push(chunk.slice());
    size += chunk.byteLength;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

function spawn(launch: ProgramCommand, options: { backend: string; cwd: string }): Deno.ChildProcess {
  try {
    return new Deno.Command(launch.command, {
      args: launch.args,
      cwd: options.cwd,
      env: launch.env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      // its own process group, so that what it starts (a tool's commands) is stopped with it, and the reaper
      // kills the group if provr itself is killed
      detached: true,
    }).spawn();
  } catch (error) {
    throw new ProveviError(
      `cannot start ${launch.command} for the ${options.backend} backend: ${
        errorMessage(error)
      }; install it, set ` +
        `agent.program to its path, and let provr run it (--allow-run)`,
      { cause: error },
    );
  }
}

/** Stops a program once: its whole group, SIGTERM then SIGKILL after 5 s; without a reaper, its own process. */
class Stopper {
  readonly #child: Deno.ChildProcess;
  #stopping = false;
  #killer: ReturnType<typeof setTimeout> | null = null;

  constructor(child: Deno.ChildProcess) {
    this.#child = child;
  }

  stop(): void {
    if (this.#stopping) return;
    this.#stopping = true;
    void stopGroup(this.#child.pid, 5000).then((ended) => {
      if (ended !== null) return;
      try {
        this.#child.kill("SIGTERM");
      } catch { /* gone already */ }
      this.#killer = setTimeout(() => {
        try {
          this.#child.kill("SIGKILL");
        } catch { /* gone already */ }
      }, 5000);
    });
  }

  /** The program ended: no SIGKILL is due. */
  end(): void {
    if (this.#killer !== null) clearTimeout(this.#killer);
  }
}

/**
 * `limits.tokens`: the tokens the program reports in its session files, read as it runs; `limits.steps`, for a
 * program with no turn limit of its own: its model responses, read the same way.
 */
class LimitWatch {
  overLimit: CancelledError | null = null;
  stepLimited = false;
  readonly #launch: ProgramCommand;
  readonly #tokens: number | undefined;
  readonly #steps: number | undefined;
  readonly #stop: () => void;
  readonly #poll: ReturnType<typeof setInterval> | null;
  #polling = false;

  constructor(launch: ProgramCommand, options: { limits: AgentSpec["limits"]; stop: () => void }) {
    this.#launch = launch;
    this.#tokens = options.limits?.tokens;
    this.#steps = launch.steps ? options.limits?.steps : undefined;
    this.#stop = options.stop;
    this.#poll = this.#tokens === undefined && this.#steps === undefined
      ? null
      : setInterval(() => void this.#read(), TOKEN_POLL_MS);
  }

  async #read(): Promise<void> {
    if (this.#polling || this.overLimit || this.stepLimited) return;
    this.#polling = true;
    try {
      const limit = this.#tokens;
      const used = limit === undefined ? 0 : await this.#launch.tokens();
      if (limit !== undefined && used > limit && !this.overLimit) {
        this.overLimit = new CancelledError(`the run passed its limit of ${limit} tokens (${used})`);
        this.#stop();
      } else if (this.#steps !== undefined) {
        const steps = await this.#launch.steps!();
        if (steps.responses >= this.#steps && steps.toolPending) {
          this.stepLimited = true;
          this.#stop();
        }
      }
    } catch {
      /* a session file being written: read it again at the next tick */
    } finally {
      this.#polling = false;
    }
  }

  /** The program ended: no more reads while it runs. */
  end(): void {
    if (this.#poll !== null) clearInterval(this.#poll);
  }

  /** A program that passed its token limit in its last answer, after the last read while it ran. */
  async lastRead(): Promise<void> {
    const limit = this.#tokens;
    if (this.overLimit || limit === undefined) return;
    const used = await this.#launch.tokens().catch(() => 0);
    if (used > limit) {
      this.overLimit = new CancelledError(`the run passed its limit of ${limit} tokens (${used})`);
    }
  }
}
