/**
 * The check of a run's event rows (and their refs) against the lines of its `events.jsonl`, for
 * `row_check.ts`: each row's line, columns, URIs and chain, read as they come, bounded.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import { sha256Hex } from "../evidence/hash.ts";
import { EVENTS_READ_WEIGHT, type ReadEvents } from "../evidence/read_events.ts";
import { jsonLineWeight } from "../evidence/json_depth.ts";
import { type Problem, problem } from "../evidence/problem.ts";
import { columnValue, EVENT_COLUMNS, eventRefs, type SqlValue } from "./store_rows.ts";
import { boundedRows, MAX_ROW_PROBLEMS, type RowProblems, type RowSource } from "./row_reading.ts";

type Problems = Pick<RowProblems, "push" | "stop">;

const show = (v: unknown) => (v === null || v === undefined ? "null" : JSON.stringify(v));

/** What the verifier read of the folder being compared, when it read both files as text; else null. */
export type InHand = ReadEvents & { texts: { events: string; manifest: string } };

/** The text columns of an event row. */
const EVENT_TEXTS = [...EVENT_COLUMNS.filter((c) => c !== "seq"), "line"];

/**
 * The events a run implies: the lines of its events.jsonl, or without it the count its manifest gives (none
 * without either: its rows have nothing to be compared with).
 */
function impliedEvents(text: string | null, lines: readonly string[], manifest: string | null): number {
  if (text !== null) return lines.length;
  // a manifest of many small values would take the heap at some 30 times its text, parsed: it implies none
  if (manifest === null || jsonLineWeight(manifest) > EVENTS_READ_WEIGHT) return 0;
  try {
    const events = (JSON.parse(manifest ?? "null") as { events?: unknown } | null)?.events;
    return typeof events === "number" && Number.isSafeInteger(events) && events >= 0 ? events : 0;
  } catch {
    return 0;
  }
}

/**
 * The event rows against the lines of `events.jsonl`: each row's line, columns, URIs and chain, and the lines
 * that have no row. The rows come in seq order, as many as the run's lines and {@linkcode MAX_ROW_PROBLEMS} more.
 */
export async function eventRowProblems(
  db: RowSource,
  runId: string,
  run: {
    text: string | null;
    lines: readonly string[];
    manifest: string | null;
    problems: RowProblems;
    hand: InHand | null;
    weight: ParsedWeight;
  },
): Promise<{
  events: EvidenceEvent[];
  count: number;
  /** Each row's line (null when it is not the file's line of its seq) and its event (null when none), by seq. */
  bySeq: Map<number, { line: string | null; event: EvidenceEvent | null }>;
}> {
  const { lines, problems } = run;
  if (run.text === null) await noLinesProblem(db, runId, problems);
  const parsed = new Map<number, { line: string | null; event: EvidenceEvent | null }>();
  // The events the verifier parsed, by the index of their line: a row that holds that line as it is takes it.
  const verified = new Map<number, EvidenceEvent>();
  // and the hash the verifier made of that line
  const lineHash = (seq: number, line: string) =>
    run.hand?.lines[seq] === line ? run.hand.lineHashes[seq]! : sha256Hex(line);
  run.hand?.events.forEach((e, i) => verified.set(run.hand!.eventLines[i]! - 1, e));
  const events: EvidenceEvent[] = [];
  /** The URIs each event names, by seq, of the rows that hold an event. */
  const named = new Map<number, string[]>();
  let count = 0;
  let before: { seq: number; line: string } | null = null;
  const rows = boundedRows(
    db,
    {
      table: "provevi_events",
      columns: ["seq", ...EVENT_TEXTS],
      texts: EVENT_TEXTS,
      where: "run_id = ?",
      params: [runId],
      order: "seq",
      most: impliedEvents(run.text, lines, run.manifest) + MAX_ROW_PROBLEMS,
      implied: "its events",
      code: "rows.event_differs",
      key: (r) => `provevi_events (run_id "${runId}", seq ${r.seq})`,
    },
    problems,
    runId,
  );
  for await (const held of rows) {
    count++;
    const row = { ...held, seq: Number(held.seq), line: String(held.line) } as Record<string, SqlValue> & {
      seq: number;
      line: string;
    };
    // the file's line, when the row holds it as it is: one text held, not two
    const line = lines[row.seq];
    if (line === row.line) row.line = line;
    const previous = before;
    before = { seq: row.seq, line: row.line };
    const same = verified.get(row.seq);
    const event = same !== undefined && line === row.line
      ? same
      : eventOfRow(row, { runId, problems, weight: run.weight });
    // the line kept only when it is the file's (held once): a row that holds another, or one past the file's
    // lines (a tampered store's, up to 1,000 rows of 32 MiB each), keeps no text once it is checked
    if (!parsed.has(row.seq)) parsed.set(row.seq, { line: line === row.line ? line : null, event });
    if (event === null) continue;
    events.push(event);
    named.set(row.seq, eventRefs(event));
    const expectedPrev = row.seq === 0
      ? null
      : previous?.seq === row.seq - 1
      ? lineHash(previous.seq, previous.line)
      : undefined;
    oneEventRowProblems({ runId, text: run.text, problems }, row, { line, event, expectedPrev });
  }
  await refRowProblems(db, runId, { named, bySeq: parsed, problems });
  if (!problems.stopped) problems.push(...unmatchedProblems({ runId, lines, rows: count, bySeq: parsed }));
  return { events, count, bySeq: parsed };
}

/** The problem of a run whose events.jsonl is missing: its event rows have no lines to be compared with. */
async function noLinesProblem(db: RowSource, runId: string, problems: Problems): Promise<void> {
  const [held] = await db.all("SELECT count(*) AS n FROM provevi_events WHERE run_id = ?", runId);
  problems.push(
    problem(
      "rows.unreadable",
      `the run's events.jsonl is missing, so its ${Number(held?.n ?? 0)} event rows have no lines`,
    ),
  );
}

/**
 * One event row against its line: the line itself, each column, and the chain (`expectedPrev`: the hash of the
 * line before, when its row came just before; undefined when no row did).
 */
function oneEventRowProblems(
  run: { runId: string; text: string | null; problems: RowProblems },
  row: Record<string, SqlValue> & { seq: number; line: string },
  { line, event, expectedPrev }: {
    line: string | undefined;
    event: EvidenceEvent;
    expectedPrev: string | null | undefined;
  },
): void {
  const key = `provevi_events (run_id "${run.runId}", seq ${row.seq})`;
  const differs = (message: string) => run.problems.push(problem("rows.event_differs", message));
  if (run.text !== null && line === undefined) differs(`${key} has no line in events.jsonl`);
  else if (line !== undefined && line !== row.line) {
    differs(`${key}: its line differs from line ${row.seq + 1} of events.jsonl`);
  }
  for (const c of EVENT_COLUMNS) {
    const want = columnValue((event[c] ?? null) as SqlValue);
    if (row[c] !== want) differs(`${key}: column ${c} is ${show(row[c])}, but its line says ${show(want)}`);
  }
  if (expectedPrev !== undefined && event.prev !== expectedPrev) {
    differs(
      `${key}: the chain does not cover its line: prev is ${show(event.prev)}, expected ${
        show(expectedPrev)
      }`,
    );
  }
}

/**
 * The refs rows against the URIs each event names: in seq order, as many as the events name and
 * {@linkcode MAX_ROW_PROBLEMS} more, one problem a seq whose rows differ, and one a seq with no event row.
 */
async function refRowProblems(
  db: RowSource,
  runId: string,
  of: {
    named: ReadonlyMap<number, string[]>;
    bySeq: ReadonlyMap<number, { event: EvidenceEvent | null }>;
    problems: RowProblems;
  },
): Promise<void> {
  let most = 0;
  for (const uris of of.named.values()) most += uris.length;
  const seen = new Set<number>();
  const key = (seq: unknown) => `provevi_event_refs (run_id "${runId}", seq ${seq})`;
  const differ = (seq: number, held: string) =>
    of.problems.push(problem(
      "rows.refs_differ",
      `${key(seq)} holds ${held}, but the event's line names ${show(of.named.get(seq) ?? [])}`,
    ));
  // the URIs of one seq, as they come; past the ones its event names, only counted
  type Group = { seq: number; uris: string[]; n: number };
  let group = null as Group | null;
  const done = (g: Group | null) => {
    if (g === null) return;
    seen.add(g.seq);
    if (!of.bySeq.has(g.seq)) {
      of.problems.push(problem("rows.refs_differ", `${key(g.seq)} has no event row`));
    } else if (of.named.has(g.seq)) {
      const want = of.named.get(g.seq)!;
      if (g.n > g.uris.length) differ(g.seq, `${g.n} URIs`);
      else if (JSON.stringify(g.uris) !== JSON.stringify(want)) differ(g.seq, show(g.uris));
    }
  };
  const rows = boundedRows(
    db,
    {
      table: "provevi_event_refs",
      columns: ["seq", "n", "uri"],
      texts: ["uri"],
      where: "run_id = ?",
      params: [runId],
      order: "seq, n",
      most: most + MAX_ROW_PROBLEMS,
      implied: "its events' refs",
      code: "rows.refs_differ",
      key: (r) => `${key(r.seq)}, n ${r.n}`,
    },
    of.problems,
    runId,
  );
  for await (const r of rows) {
    const seq = Number(r.seq);
    if (group?.seq !== seq) {
      done(group);
      group = { seq, uris: [], n: 0 };
    }
    if (++group.n <= (of.named.get(seq)?.length ?? 0) + 8) group.uris.push(String(r.uri));
  }
  done(group);
  if (of.problems.stopped) return;
  for (const [seq, uris] of of.named) if (uris.length && !seen.has(seq)) differ(seq, show([]));
}

/** The lines of events.jsonl with no row (a cut run, or rows lacking); the first of them named. */
function unmatchedProblems(
  { runId, lines, rows, bySeq }: {
    runId: string;
    lines: readonly string[];
    rows: number;
    bySeq: ReadonlyMap<number, unknown>;
  },
): Problem[] {
  const missing: number[] = [];
  let lacking = 0;
  for (let i = 0; i < lines.length; i++) {
    if (bySeq.has(i)) continue;
    if (++lacking <= 20) missing.push(i);
  }
  if (!lacking) return [];
  const cut = lacking === lines.length - rows && missing[0] === rows;
  const more = lacking > missing.length ? ` and ${lacking - missing.length} more` : "";
  return [problem(
    "rows.events_missing",
    cut
      ? `events.jsonl has ${lines.length} lines, but provevi_events holds ${rows} rows of run "${runId}": lines ${
        rows + 1
      }–${lines.length} are not in the store`
      : `provevi_events lacks the rows of run "${runId}" for seq ${missing.join(", ")}${more}`,
  )];
}

/**
 * What the row check may parse of a run's rows and of its events.jsonl together, weighed as the verifier weighs
 * the lines it reads ({@linkcode jsonLineWeight}, {@linkcode EVENTS_READ_WEIGHT} by default): rows and lines the
 * verifier did not parse are parsed here and kept, and a row of many small values (`{"a":[{},{},…]}`, under the
 * 16 MiB of a line) takes the heap at some 30 times its text: a store of a few such rows took the check gigabytes.
 * Past the weight the check stops, in one problem.
 */
export class ParsedWeight {
  #left: number;
  readonly #most: number;

  /** @param most The most weight parsed ({@linkcode EVENTS_READ_WEIGHT} by default). */
  constructor(most: number = EVENTS_READ_WEIGHT) {
    this.#most = most;
    this.#left = most;
  }

  /**
   * True when `line` may be parsed; false past the weight, the check stopped with a problem naming `where`.
   *
   * @param line The line or row's text about to be parsed.
   * @param where What holds it, as a problem names it.
   * @param problems The check's problems.
   * @returns Whether to parse it.
   */
  take(line: string, where: string, problems: Problems): boolean {
    if (this.#left < 0) return false;
    this.#left -= jsonLineWeight(line);
    if (this.#left >= 0) return true;
    problems.stop(problem(
      "rows.unreadable",
      `${where} would take the check more than ${this.#most} bytes of memory parsed: the rest of the run's rows and lines is not read`,
    ));
    return false;
  }
}

/** The event an event row's line holds, or null (reported) when it holds none or is past the weight parsed. */
function eventOfRow(
  row: { seq: number; line: string },
  to: { runId: string; problems: Problems; weight: ParsedWeight },
): EvidenceEvent | null {
  const key = `provevi_events (run_id "${to.runId}", seq ${row.seq})`;
  if (!to.weight.take(row.line, key, to.problems)) return null;
  let event: EvidenceEvent;
  try {
    event = JSON.parse(row.line) as EvidenceEvent;
  } catch {
    to.problems.push(problem("rows.event_differs", `${key}: its line is not JSON`));
    return null;
  }
  if (typeof event !== "object" || event === null || Array.isArray(event)) {
    to.problems.push(problem("rows.event_differs", `${key}: its line is not a JSON object`));
    return null;
  }
  return event;
}
