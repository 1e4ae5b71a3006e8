/**
 * `provr run`'s progress line on a terminal.
 * @module
 */
import type { Io } from "./_io.ts";

/** How often the progress line is redrawn while nothing happens, so that its clock moves. */
export const PROGRESS_TICK_MS = 100;

/** Options of {@linkcode runProgress}. */
export interface ProgressOptions {
  /** The clock, in milliseconds; `performance.now` by default. */
  now?: () => number;
  /** The terminal's columns; the console's by default, undefined when there is none. */
  width?: number | undefined;
  /**
   * Calls `tick` every so often until the function it returns is called: every {@linkcode PROGRESS_TICK_MS} by
   * default, with a timer that never keeps the process alive.
   */
  every?: (tick: () => void) => () => void;
}

/** The progress line of a run. */
export interface RunProgress {
  /** An event of the run: the step shown is its seq and type, and a model call adds its tokens. */
  event(type: string, seq: number, event: { data: Record<string, unknown> }): void;
  /** A piece of the model's text; the line is redrawn at most every 50 ms for text alone. */
  text(piece: string): void;
  /** Clears the line and stops its clock. */
  done(): void;
}

/**
 * The progress line of a run on a terminal: elapsed time, the step (the last event's seq and type), the tokens
 * so far and the last line of the model's text as it streams, redrawn in place (cut to the terminal's width by
 * {@linkcode Io.progress}); its clock moves while the model is silent. Only for a terminal: a pipe gets none.
 *
 * @param io Where to draw.
 * @param options The clock, the width, the timer.
 * @example
 * ```ts
 * import { runProgress } from "./_progress.ts";
 * import { processIo } from "./_io.ts";
 * const io = processIo();
 * const progress = io.terminal ? runProgress(io) : null;
 * progress?.event("run_created", 0, { data: {} });
 * progress?.done();
 * ```
 */
export function runProgress(io: Io, options: ProgressOptions = {}): RunProgress {
  const now = options.now ?? (() => performance.now());
  const width = "width" in options ? options.width : terminalColumns();
  const started = now();
  let tokens = 0;
  let step = "";
  let text = "";
  let drawn = -Infinity;
  let shown = false;
  const draw = () => {
    const head = `provr: ${((now() - started) / 1000).toFixed(1)}s  ${step}  ${tokens} tokens`;
    io.progress(`${head}${tailOf(lastLine(text), width, head)}`);
    drawn = now();
    shown = true;
  };
  // Nothing shows before the first event; from then on the clock moves without one.
  const stop = (options.every ?? everyTick)(() => {
    if (shown) draw();
  });
  return {
    event(type, seq, event) {
      if (type === "model_called") {
        const n = (v: unknown) => (typeof v === "number" ? v : 0);
        tokens += n(event.data.input_tokens) + n(event.data.output_tokens);
      }
      step = `step ${seq} ${type}`;
      draw();
    },
    text(piece) {
      text = (text + piece).slice(-4096);
      if (now() - drawn >= 50) draw();
    },
    done() {
      stop();
      if (shown) io.progress("");
      shown = false;
    },
  };
}

/** The model's last line after the head: a line too long keeps its end, after a `…`, since that is what is new. */
function tailOf(line: string, width: number | undefined, head: string): string {
  const room = width === undefined ? Infinity : width - 1 - head.length - 4;
  const tail = [...line].length <= room
    ? line
    : room >= 10
    ? "…" + [...line].slice(-(room - 1)).join("")
    : "";
  return tail ? `  | ${tail}` : "";
}

function everyTick(tick: () => void): () => void {
  const id = setInterval(tick, PROGRESS_TICK_MS);
  Deno.unrefTimer(id);
  return () => clearInterval(id);
}

/** The columns of the terminal, or undefined when there is none. */
function terminalColumns(): number | undefined {
  try {
    return Deno.consoleSize().columns || undefined;
  } catch {
    return undefined;
  }
}

/** The last line of a text that has something on it, its runs of spaces made one. */
function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.replace(/\s+/g, " ").trim()).filter((l) => l !== "");
  return lines.at(-1) ?? "";
}
