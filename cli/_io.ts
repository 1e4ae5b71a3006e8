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
}

/** The process's own standard output and error. */
export function processIo(): Io {
  const encoder = new TextEncoder();
  return {
    out: (line) => void Deno.stdout.writeSync(encoder.encode(line + "\n")),
    err: (line) => void Deno.stderr.writeSync(encoder.encode(line + "\n")),
    terminal: Deno.stderr.isTerminal(),
    progress: (line) => void Deno.stderr.writeSync(encoder.encode(`\r\x1b[2K${line}`)),
  };
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
 * Moves to the folder the user typed a `deno task` command in. `deno task` runs in the project's root and names
 * the user's folder in `INIT_CWD`; without this, `deno task provr run run.yaml` would read `run.yaml`,
 * `provcat.yaml` and `sqlite:///evidence.db` from the project's root, not from where the user is, as a compiled
 * binary does.
 */
export function enterUserFolder(): void {
  let folder: string | undefined;
  try {
    folder = Deno.env.get("INIT_CWD");
  } catch {
    return; // not allowed to read it: stay where the process started
  }
  if (folder) Deno.chdir(folder);
}
