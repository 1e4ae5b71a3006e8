/**
 * `provr run`'s progress line on a terminal.
 * @module
 */
import type { Io } from "./_io.ts";

/**
 * The progress line of a run on a terminal: elapsed time, the step (the last event's seq and type), the tokens
 * so far and the last line of the model's text as it streams, redrawn in place (cut to the terminal's width by
 * {@linkcode Io.progress}); nothing in a pipe.
 */
export function runProgress(
  io: Io,
  now: () => number = () => performance.now(),
  width: number | undefined = terminalColumns(),
) {
  const started = now();
  let tokens = 0;
  let step = "";
  let text = "";
  let drawn = -Infinity;
  let shown = false;
  const draw = () => {
    const elapsed = ((now() - started) / 1000).toFixed(1);
    const head = `provr: ${elapsed}s  ${step}  ${tokens} tokens`;
    const line = lastLine(text);
    // The text's end is what is new: a line too long for the terminal keeps its end, after a `…`.
    const room = width === undefined ? Infinity : width - 1 - head.length - 4;
    const tail = [...line].length <= room
      ? line
      : room >= 10
      ? "…" + [...line].slice(-(room - 1)).join("")
      : "";
    io.progress(`${head}${tail ? `  | ${tail}` : ""}`);
    drawn = now();
    shown = true;
  };
  return {
    event(type: string, seq: number, event: { data: Record<string, unknown> }) {
      if (type === "model_called") {
        const n = (v: unknown) => (typeof v === "number" ? v : 0);
        tokens += n(event.data.input_tokens) + n(event.data.output_tokens);
      }
      step = `step ${seq} ${type}`;
      draw();
    },
    /** A piece of the model's text; the line is redrawn at most every 50 ms for text alone. */
    text(piece: string) {
      text = (text + piece).slice(-4096);
      if (now() - drawn >= 50) draw();
    },
    done() {
      if (shown) io.progress("");
      shown = false;
    },
  };
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
