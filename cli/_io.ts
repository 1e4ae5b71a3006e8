/**
 * What a command writes to, so that tests run commands in-process and read their output.
 * @module
 */

/** The output of a command. */
export interface Io {
  /** Writes a line to standard output. */
  out(line: string): void;
  /** Writes a line to standard error. */
  err(line: string): void;
  /** True when standard error is a terminal, for progress lines. */
  readonly terminal: boolean;
  /** Replaces the progress line on a terminal; an empty text clears it. */
  progress(line: string): void;
  /** The width of standard output when it is a terminal; absent in a pipe, where lines are never cut. */
  readonly width?: number;
}

/**
 * A line as it may be written to a terminal: control characters other than tab and newline (an escape, a C1
 * code such as U+009B, which starts a terminal command) are written as `\u` escapes, so that a run's recorded
 * text cannot drive the terminal of whoever shows it. JSON stays JSON: in a string, `\u009b` means the same.
 */
export function printable(line: string): string {
  return line.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** The process's own standard output and error. */
export function processIo(): Io {
  const encoder = new TextEncoder();
  let closed = false;
  return {
    // A reader that stops early (`prove show RUN | head -1`) closes the pipe: the rest is dropped quietly.
    out: (line) => {
      if (closed) return;
      try {
        writeAll(encoder.encode(printable(line) + "\n"));
      } catch (error) {
        if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
        closed = true;
      }
    },
    err: (line) => void Deno.stderr.writeSync(encoder.encode(printable(line) + "\n")),
    terminal: Deno.stderr.isTerminal(),
    // A progress line is cut to the terminal's width (a wrapped line could not be redrawn in place), and its
    // control characters are escaped, as every line's are: it may hold the model's text.
    progress: (line) =>
      void Deno.stderr.writeSync(encoder.encode(`\r\x1b[2K${printable(fitted(line, progressWidth()))}`)),
    ...(stdoutWidth() ? { width: stdoutWidth() } : {}),
  };
}

/** The terminal's width less one: a line that fills the last column wraps on some terminals. */
function progressWidth(): number | undefined {
  try {
    return Deno.consoleSize().columns - 1 || undefined;
  } catch {
    return undefined; // no terminal, or no console size on this system
  }
}

function stdoutWidth(): number | undefined {
  try {
    return Deno.stdout.isTerminal() ? Deno.consoleSize().columns : undefined;
  } catch {
    return undefined; // no console size on this system
  }
}

/**
 * A line cut to a terminal's width, with `…` where it was cut; whole when there is no width.
 *
 * @param line The line.
 * @param width The terminal's width, or undefined in a pipe.
 */
export function fitted(line: string, width: number | undefined): string {
  if (width === undefined || width < 20) return line;
  const chars = [...printable(line)];
  return chars.length <= width ? line : chars.slice(0, width - 1).join("") + "…";
}

function writeAll(bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += Deno.stdout.writeSync(bytes.subarray(offset));
}

/** An {@linkcode Io} that keeps what it is given, for tests. */
export function bufferIo(): Io & { stdout: string[]; stderr: string[]; text(): string } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    terminal: false,
    progress: () => {},
    out: (line) => void stdout.push(line),
    err: (line) => void stderr.push(line),
    text: () => stdout.join("\n"),
  };
}

/**
 * True when the process started in this project's folder, as `deno task` starts a command (in the folder of
 * deno.json); only then is `INIT_CWD` the folder the user typed the task in.
 */
function startedByTask(): boolean {
  const project = new URL("../", import.meta.url);
  if (project.protocol !== "file:") return false;
  try {
    return Deno.realPathSync(Deno.cwd()) === Deno.realPathSync(project);
  } catch {
    return false;
  }
}

/**
 * Moves to the folder the user typed a `deno task` command in. `deno task` runs in the project's root and names
 * the user's folder in `INIT_CWD`; without this, `deno task provr run run.yaml` would read `run.yaml`,
 * `provcat.yaml` and `sqlite:///evidence.db` from the project's root, not from where the user is, as a compiled
 * binary does.
 *
 * @returns Why the folder cannot be entered, as one line, or undefined when the process is there now.
 */
export function enterUserFolder(): string | undefined {
  // An installed or compiled command shares its task's permission set, INIT_CWD included, but runs where it
  // is typed: a script that sets INIT_CWD for its own reasons (npm does) must not move it.
  let folder: string | undefined;
  try {
    folder = Deno.env.get("INIT_CWD");
  } catch {
    return; // not allowed to read it: stay where the process started
  }
  if (!folder || !startedByTask()) return;
  try {
    Deno.chdir(folder);
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? "does not exist"
      : error instanceof Deno.errors.NotADirectory
      ? "is not a folder"
      : error instanceof Deno.errors.PermissionDenied
      ? "cannot be entered"
      : `cannot be entered (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`;
    return `the folder the command was typed in, ${JSON.stringify(folder)} (INIT_CWD), ${why}`;
  }
}
