/**
 * The reading of a run's `events.jsonl`: each line's form, type, sequence, run ID and chain, and the order of
 * the run's events. A malformed line is a problem, not an exception.
 * @module
 */
import { canonicalOrNull, eventProblems, type EvidenceEvent } from "./event.ts";
import { eventDataProblems } from "./event_rules.ts";
import { plainCanonicalText } from "./event_line.ts";
import { sha256Hex } from "./hash.ts";
import { jsonLineWeight, MAX_JSON_DEPTH, parseJson, TooDeepJson } from "./json_depth.ts";
import { atLine, hasCode, type Problem, problem } from "./problem.ts";

/** The events of a run as a check reads them, with the problems of reading them. */
export interface ReadEvents {
  /** The lines that parsed as events. */
  events: EvidenceEvent[];
  /** The line number (from 1) of each of `events`. */
  eventLines: number[];
  /** Every line of the file, without its newline (a line that is not UTF-8 as decoded with U+FFFD). */
  lines: string[];
  /** The SHA-256 of each line's bytes, without its newline. */
  lineHashes: string[];
  /** The problems found, each with its code and where it is. */
  problems: Problem[];
  /**
   * True when every line is an event. The checks that need every event (the outputs against `output/`, the
   * status against the manifest) run only then: a line that cannot be read is the cause, and what follows
   * from it is not reported again.
   */
  complete: boolean;
  /**
   * True when the manifest's counts and last hash cannot be compared without repeating a cause already
   * reported: the file was cut part way, or events follow the run's end.
   */
  settled: boolean;
  /**
   * The texts of `events.jsonl` and `manifest.json` as {@linkcode verifyEvidence} read them (null for a file that
   * is missing or cannot be read as text), for the checks that follow it, so that no file is read twice.
   */
  texts?: { events: string | null; manifest: string | null };
}

/**
 * Parses the text of `events.jsonl`, checking each line's form, type, sequence, run ID and chain.
 *
 * @param text The file's text.
 * @param options `weight`: the most its lines read may weigh ({@linkcode EVENTS_READ_WEIGHT} by default).
 * @returns The events that parsed, their lines, and every problem found.
 * @example
 * ```ts
 * import { readEventsText } from "./read_events.ts";
 * readEventsText("not json\n").problems[0]!.code; // "line.not_json"
 * ```
 */
export function readEventsText(text: string, options: { weight?: number } = {}): ReadEvents {
  const cut = text !== "" && !text.endsWith("\n");
  return readLines(textLines(text), cut, options.weight ?? EVENTS_READ_WEIGHT);
}

/** The lines of a text, one at a time (a file of millions of empty lines is not split into an array first). */
function* textLines(text: string): Generator<RawLine> {
  for (let start = 0; start < text.length;) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    yield { line: text.slice(start, end), bytes: null, last: end + 1 >= text.length };
    start = end + 1;
  }
}

/**
 * The lines of `events.jsonl`'s text as {@linkcode readEventsText} reads them (a last line without its newline
 * is one too), without parsing or checking them: for a check that compares lines (a store's rows with the
 * file) and leaves the events' checks to the verifier.
 *
 * @param text The file's text.
 * @returns Its lines, without their newlines.
 * @example
 * ```ts
 * import { eventsTextLines } from "./read_events.ts";
 * eventsTextLines('{"a":1}\n{"b":2}'); // ['{"a":1}', '{"b":2}']
 * ```
 */
export function eventsTextLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * Parses the bytes of `events.jsonl` line by line, so that a line that is not UTF-8 is a problem of that line
 * while the others are still read and chained (each line's hash is of its own bytes).
 *
 * @param bytes The file's bytes.
 * @returns As {@linkcode readEventsText}.
 */
export function readEventsBytes(bytes: Uint8Array): ReadEvents {
  return readLines(
    byteLines(bytes),
    bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a,
    EVENTS_READ_WEIGHT,
  );
}

/** The lines of a file's bytes, one at a time; a line that is not UTF-8 keeps its bytes. */
function* byteLines(bytes: Uint8Array): Generator<RawLine> {
  for (let start = 0; start < bytes.length;) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    const part = bytes.subarray(start, end);
    let line: string | null = null;
    try {
      line = strictUtf8.decode(part);
    } catch { /* reported by readLines */ }
    yield {
      line: line ?? lenientUtf8.decode(part),
      bytes: line === null ? part : null,
      last: end + 1 >= bytes.length,
    };
    start = end + 1;
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** One line of `events.jsonl`; `bytes` is set only for a line that is not UTF-8: its hash is of those bytes. */
interface RawLine {
  line: string;
  bytes: Uint8Array | null;
  /** The file's last line. */
  last: boolean;
}

/**
 * The most problems a reading of the lines reports; past them the rest of the file is not read (one problem says
 * so). A file of millions of empty lines (a few megabytes) was a problem object each: 4 million took 3 GB of
 * memory and 20 s; a file of one event's line repeated, two each (out of sequence, chain broken).
 */
export const MAX_LINE_PROBLEMS = 1000;

/**
 * The most the lines of `events.jsonl` read may weigh ({@linkcode jsonLineWeight}): six times the most a file may
 * hold, past what a writer's file of 512 MiB weighs (its lines 5.5 times their text at most). Lines of many small
 * values (`[{},{},…]`, in lines under the 16 MiB bound) took the heap at some 30 times their text: two of 15 MiB
 * took prove verify 914 MiB, a file of 512 MiB some 15 GiB. Past the weight the rest of the file is not read, as
 * past {@linkcode MAX_LINE_PROBLEMS}.
 */
export const EVENTS_READ_WEIGHT = 6 * 512 * 1024 * 1024;

/** What {@linkcode readLines} carries from one line to the next. */
interface LineState {
  problems: Problem[];
  events: EvidenceEvent[];
  eventLines: number[];
  lineHashes: string[];
  complete: boolean;
  runId: string | null;
  lastSeq: number | null;
  // A line that cannot be read was changed; the next line's prev then differs as a consequence, not a cause.
  afterUnreadable: boolean;
}

function readLines(raw: Iterable<RawLine>, cut: boolean, most: number): ReadEvents {
  const lines: string[] = [];
  const state: LineState = {
    problems: [],
    events: [],
    eventLines: [],
    lineHashes: [],
    complete: true,
    runId: null,
    lastSeq: null,
    afterUnreadable: false,
  };
  let stopped: string | null = null;
  let weight = 0;
  for (const r of raw) {
    if (state.problems.length >= MAX_LINE_PROBLEMS) {
      stopped = `has ${state.problems.length} problems by line ${lines.length}`;
      break;
    }
    weight += jsonLineWeight(r.line); // before it is parsed
    if (weight > most) {
      stopped = `would take more than ${most} bytes of memory read, by line ${lines.length + 1}`;
      break;
    }
    const index = lines.length;
    lines.push(r.line);
    state.lineHashes.push(sha256Hex(r.bytes ?? r.line));
    readLine(state, { ...r, index, cutLast: cut && r.last });
  }
  const { problems, events, eventLines, lineHashes } = state;
  if (stopped !== null) {
    problems.push(problem(
      "events.unreadable",
      `events.jsonl ${stopped}: the rest of it is not read`,
      atLine(lines.length),
    ));
  } else if (cut) {
    problems.unshift(problem(
      "events.cut",
      `events.jsonl line ${lines.length} has no newline at its end: the file was cut part way`,
      atLine(lines.length),
    ));
  }
  const order = orderProblems(events, eventLines, lines.length);
  problems.push(...order);
  const settled = !cut && stopped === null && !hasCode(order, "order.after_end");
  return {
    events,
    eventLines,
    lines,
    lineHashes,
    problems,
    complete: state.complete && stopped === null,
    settled,
  };
}

/** Reads one line into `state`: its event, or the problem that it is not one, then the checks of its event. */
function readLine(state: LineState, at: RawLine & { index: number; cutLast: boolean }): void {
  const n = at.index + 1;
  const event = parseLine(state, at);
  if (event === null) return;
  const prevUnreadable = state.afterUnreadable;
  state.afterUnreadable = false;
  eventLineProblems(state, { event, line: at.line, index: at.index, prevUnreadable });
  state.problems.push(...eventDataProblems(event, n));
  state.events.push(event);
  state.eventLines.push(n);
}

/** The event of a line, or null with the line's problem (if any) in `state`. */
function parseLine(
  state: LineState,
  { line, bytes, index, cutLast }: RawLine & { index: number; cutLast: boolean },
): EvidenceEvent | null {
  const n = index + 1;
  const where = `events.jsonl line ${n}`;
  const unreadable = (found: Problem) => {
    state.problems.push(found);
    state.complete = false;
    state.afterUnreadable = true;
    return null;
  };
  if (bytes !== null) {
    return unreadable(
      problem(
        "line.not_utf8",
        `${where} is not valid UTF-8, so its text is not the bytes that were hashed`,
        {
          ...atLine(n),
        },
      ),
    );
  }
  let parsed: unknown;
  try {
    parsed = parseJson(line);
  } catch (error) {
    if (error instanceof TooDeepJson) {
      return unreadable(
        problem(
          "line.too_deep",
          `${where} nests arrays and objects more than ${MAX_JSON_DEPTH} deep`,
          atLine(n),
        ),
      );
    }
    // The last line of a cut file is not JSON because it was cut: that problem is reported already.
    if (cutLast) {
      state.complete = false;
      return null;
    }
    return unreadable(problem("line.not_json", `${where} is not JSON`, atLine(n)));
  }
  const shape = eventProblems(parsed);
  if (shape.length) {
    const seq = (parsed as { seq?: unknown } | null)?.seq;
    const known = Number.isSafeInteger(seq) ? seq as number : null;
    return unreadable(
      problem(
        "line.not_event",
        `${where} (seq ${known ?? "unreadable"}) is not an event: ${shape.join("; ")}`,
        atLine(n, known),
      ),
    );
  }
  return parsed as EvidenceEvent;
}

/** The checks of one event against its line and the lines before it: its form, sequence, run and chain. */
function eventLineProblems(
  state: LineState,
  { event, line, index, prevUnreadable }: {
    event: EvidenceEvent;
    line: string;
    index: number;
    prevUnreadable: boolean;
  },
): void {
  const { problems } = state;
  const n = index + 1;
  const at = `events.jsonl line ${n} (seq ${event.seq})`;
  const place = atLine(n, event.seq);
  const canonical = canonicalProblem(event, { line, at, place });
  if (canonical) problems.push(canonical);
  // Each seq follows the one before it; after a gap or a step back the count goes on from this seq, so one
  // removed or inserted line is one problem, not one per line after it.
  const lastSeq = state.lastSeq;
  const want = lastSeq === null ? index : lastSeq + 1;
  if (event.seq !== want && !prevUnreadable) {
    problems.push(problem(
      "seq.out_of_order",
      lastSeq === null
        ? `${at} is out of sequence: line ${n} must have seq ${index}`
        : `${at} is out of sequence: after seq ${lastSeq} comes seq ${want}`,
      place,
    ));
  }
  state.lastSeq = event.seq;
  state.runId ??= event.run_id;
  if (event.run_id !== state.runId) {
    problems.push(
      problem("run.id_mismatch", `${at} belongs to run "${event.run_id}", not "${state.runId}"`, place),
    );
  }
  const expected = index === 0 ? null : state.lineHashes[index - 1]!;
  if (event.prev !== expected && !prevUnreadable) {
    problems.push(problem(
      "chain.broken",
      index === 0
        ? `${at} has prev ${event.prev}, but the first event's prev is null`
        : `${at} has prev ${event.prev}, but line ${index} hashes to ${expected}`,
      place,
    ));
  }
}

/** The problem of a line that is not its event's RFC 8785 form, or null. */
function canonicalProblem(
  event: EvidenceEvent,
  { line, at, place }: { line: string; at: string; place: ReturnType<typeof atLine> },
): Problem | null {
  // The usual line takes one walk and one JSON.stringify; anything else goes to the package, as before.
  const canonical = plainCanonicalText(event) ?? canonicalOrNull(event);
  if (canonical === null && holdsLoneSurrogate(event)) {
    return problem(
      "line.lone_surrogate",
      `${at} holds a lone surrogate (an escape such as \\ud800 without its pair), which has no UTF-8 form and no RFC 8785 form`,
      place,
    );
  } else if (canonical === null) {
    // JSON.parse reads a number past the largest double (1e400) as Infinity, which RFC 8785 cannot write.
    return problem(
      "line.not_canonical",
      `${at} holds a number that no double holds (such as 1e400), which has no RFC 8785 form`,
      place,
    );
  } else if (canonical !== line) {
    return problem("line.not_canonical", `${at} is not in RFC 8785 canonical form`, place);
  }
  return null;
}

/**
 * The order every run keeps: `run_created` first and once (a second one would start the run again: another
 * agent, spec or signing key under the same chain), and at most one ending event (`run_completed` or
 * `run_failed`), which is the last line. A chain rewritten after the end cannot hide events behind it; the
 * problem names the first line after the end, where the record goes wrong.
 */
function orderProblems(events: EvidenceEvent[], at: number[], lineCount: number): Problem[] {
  const problems: Problem[] = [];
  if (events.length && at[0] === 1 && events[0]!.type !== "run_created") {
    problems.push(problem(
      "order.first_not_created",
      `events.jsonl line 1 (seq ${events[0]!.seq}) is ${
        events[0]!.type
      }: the first event must be run_created`,
      atLine(1, events[0]!.seq),
    ));
  }
  const created = events.flatMap((e, i) => e.type === "run_created" ? [{ e, line: at[i]! }] : []);
  if (created.length > 1) {
    problems.push(problem(
      "order.created_twice",
      `events.jsonl lines ${created.map((x) => x.line).join(", ")} (seq ${
        created.map((x) => x.e.seq).join(", ")
      }) each create the run: a run is created once`,
      atLine(created[1]!.line, created[1]!.e.seq),
    ));
  }
  const ends = events.flatMap((e, i) =>
    e.type === "run_completed" || e.type === "run_failed" ? [{ e, line: at[i]! }] : []
  );
  if (ends.length > 1) {
    problems.push(problem(
      "order.ends_twice",
      `events.jsonl lines ${ends.map((x) => x.line).join(", ")} (seq ${
        ends.map((x) => x.e.seq).join(", ")
      }) each end the run: a run ends once`,
      atLine(ends[1]!.line, ends[1]!.e.seq),
    ));
  }
  const end = ends[0];
  if (end && end.line !== lineCount) {
    const next = end.line + 1;
    const i = at.indexOf(next);
    const seq = i === -1 ? null : events[i]!.seq;
    problems.push(problem(
      "order.after_end",
      `events.jsonl line ${next}${
        seq === null ? "" : ` (seq ${seq})`
      } follows the run's end: line ${end.line} (seq ${end.e.seq}) ends the run with ${end.e.type}, and ${
        lineCount - end.line
      } line(s) follow it, to line ${lineCount}`,
      atLine(next, seq),
    ));
  }
  return problems;
}

/** Whether a parsed value holds a text or a key with a lone surrogate; looked at without recursion. */
function holdsLoneSurrogate(value: unknown): boolean {
  const todo: unknown[] = [value];
  while (todo.length) {
    const v = todo.pop();
    if (typeof v === "string") {
      if (!v.isWellFormed()) return true;
    } else if (typeof v === "object" && v !== null) {
      for (const [key, item] of Object.entries(v)) {
        if (!key.isWellFormed()) return true;
        todo.push(item);
      }
    }
  }
  return false;
}
