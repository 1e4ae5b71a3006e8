/**
 * The facts of an event's `data` that a verifier relies on, checked by recomputing them rather than trusting a
 * flag: the payload keys of every event, the outputs of `output_artifact_created`, the inputs of
 * `input_staged` and `input_verified`. The rest of `data` is informative (docs/evidence-format.md).
 * @module
 */
import { EVENT_TYPES, type EvidenceEvent } from "./event.ts";
import { isSha256 } from "./hash.ts";
import { atLine, type Problem, problem } from "./problem.ts";
import type { ProblemCode } from "./problem_codes.ts";

/** Where an event is in `events.jsonl`, for a problem's text: `events.jsonl line 11 (seq 10, input_verified)`. */
export function eventWhere(event: Pick<EvidenceEvent, "seq" | "type">, line: number): string {
  return `events.jsonl line ${line} (seq ${event.seq}, ${event.type})`;
}

/**
 * The problems of one event's `data` for the rules every event keeps: a known `type`, and every top-level key
 * that ends in `_payload` holding null or a SHA-256; `output_artifact_created`, `input_staged` and `run_created`
 * with the fields the checks read.
 *
 * @param event A parsed event.
 * @param line Its line number, from 1.
 * @returns The problems found.
 * @example
 * ```ts
 * import { EventChain } from "./chain.ts";
 * import { eventDataProblems } from "./event_rules.ts";
 * const { event } = new EventChain("r").next({ type: "telepathy", component: "x", actor: "a" });
 * eventDataProblems(event, 1)[0]!.code; // "line.unknown_type"
 * ```
 */
export function eventDataProblems(event: EvidenceEvent, line: number): Problem[] {
  const where = eventWhere(event, line);
  const problems: Problem[] = [];
  const push = (code: ProblemCode, message: string) =>
    problems.push(problem(code, message, atLine(line, event.seq)));
  if (!(EVENT_TYPES as readonly string[]).includes(event.type)) {
    push(
      "line.unknown_type",
      `${where} has an unknown type ${
        JSON.stringify(event.type)
      }: the event types are those of docs/evidence-format.md`,
    );
  }
  for (const [key, value] of Object.entries(event.data)) {
    if (key.endsWith("_payload") && value !== null && !isSha256(value)) {
      push(
        "line.payload_key",
        `${where} has data.${key} ${short(value)}, which is neither null nor a SHA-256`,
      );
    }
  }
  const d = event.data;
  if (event.type === "output_artifact_created") {
    if (!isOutputPath(d.path)) {
      push("line.output_data", `${where} has data.path ${short(d.path)}, not a relative path under output/`);
    }
    if (!isSha256(d.sha256)) {
      push("line.output_data", `${where} has data.sha256 ${short(d.sha256)}, not a SHA-256`);
    }
    if (!Number.isSafeInteger(d.size) || (d.size as number) < 0) {
      push("line.output_data", `${where} has data.size ${short(d.size)}, not a whole number of bytes`);
    }
  }
  if (event.type === "run_created") {
    // What checks 8 and 9 read: a value of another type would be read as "no bundle" or "not signed".
    if ("bundle" in d && typeof d.bundle !== "boolean") {
      push("line.created_data", `${where} has data.bundle ${short(d.bundle)}, not true or false`);
    }
    if ("signing_key" in d && d.signing_key !== null && !isSha256(d.signing_key)) {
      push(
        "line.created_data",
        `${where} has data.signing_key ${short(d.signing_key)}, neither null nor a key ID (64 hex digits)`,
      );
    }
  }
  if (event.type === "input_staged") {
    if (typeof d.name !== "string" || d.name === "") {
      push("line.input_data", `${where} has data.name ${short(d.name)}, not the input's name`);
    }
    if (!isSha256(d.sha256)) {
      push("line.input_data", `${where} has data.sha256 ${short(d.sha256)}, not a SHA-256`);
    }
  }
  return problems;
}

/**
 * True for a path that `output_artifact_created` may record: relative, `/`-separated, without empty, `.` or
 * `..` segments and without a backslash or NUL, so that it names one file under `output/` on every system.
 */
export function isOutputPath(value: unknown): value is string {
  if (typeof value !== "string" || value === "" || value.includes("\\") || value.includes("\0")) return false;
  return value.split("/").every((s) => s !== "" && s !== "." && s !== "..");
}

/**
 * The inputs' re-check, recomputed: each `input_verified` must name an input that an earlier `input_staged`
 * staged, carry the hash the input had at the end (`sha256`), and an `ok` that is the boolean `sha256 ===`
 * the staged hash; `expected`, when present, must be the staged hash. An input whose end hash differs from the
 * staged one changed during the run, whatever its flag says. A name is staged once: a second `input_staged` of
 * it is a problem, and the first one's hash counts.
 *
 * @param events The run's events, each with its line number.
 * @returns The problems found.
 * @example
 * ```ts
 * import { inputProblems } from "./event_rules.ts";
 * inputProblems([]); // []
 * ```
 */
export function inputProblems(events: ReadonlyArray<{ event: EvidenceEvent; line: number }>): Problem[] {
  const problems: Problem[] = [];
  const staged = new Map<string, string>();
  for (const { event, line } of events) {
    const d = event.data;
    const where = eventWhere(event, line);
    const push = (code: ProblemCode, message: string) =>
      problems.push(problem(code, message, atLine(line, event.seq)));
    if (event.type === "input_staged" && typeof d.name === "string" && isSha256(d.sha256)) {
      if (staged.has(d.name)) {
        push("input.staged_twice", `${where} stages input ${short(d.name)} a second time`);
      } else staged.set(d.name, d.sha256);
    }
    if (event.type !== "input_verified") continue;
    if (typeof d.name !== "string" || !staged.has(d.name)) {
      push("input.unstaged", `${where} names input ${short(d.name)}, which no earlier input_staged staged`);
      continue;
    }
    const want = staged.get(d.name)!;
    if (!isSha256(d.sha256)) {
      push("input.sha256", `${where} has data.sha256 ${short(d.sha256)}, not a SHA-256`);
      continue;
    }
    if ("expected" in d && d.expected !== want) {
      push(
        "input.expected",
        `${where} has data.expected ${short(d.expected)}, but the input was staged as ${want}`,
      );
    }
    if (typeof d.ok !== "boolean") {
      push("input.ok", `${where} has data.ok ${short(d.ok)}, not true or false`);
    } else if (d.ok !== (d.sha256 === want)) {
      push(
        "input.ok",
        `${where} has data.ok ${d.ok}, but the input hashed to ${d.sha256} at the end and was staged as ${want}`,
      );
    }
    if (d.sha256 !== want) {
      push("input.changed", `${where}: input ${JSON.stringify(d.name)} changed during the run`);
    }
  }
  return problems;
}

/**
 * The outputs' record: one `output_artifact_created` per path, so that which of two hashes counts is never a
 * question (the statement of a signed run has one subject per path).
 *
 * @param events The run's events, each with its line number.
 * @returns A problem for each event that records a path a second time.
 * @example
 * ```ts
 * import { outputRecordProblems } from "./event_rules.ts";
 * outputRecordProblems([]); // []
 * ```
 */
export function outputRecordProblems(
  events: ReadonlyArray<{ event: EvidenceEvent; line: number }>,
): Problem[] {
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const { event, line } of events) {
    if (event.type !== "output_artifact_created" || !isOutputPath(event.data.path)) continue;
    if (seen.has(event.data.path)) {
      problems.push(problem(
        "output.recorded_twice",
        `${eventWhere(event, line)} records output/${event.data.path} a second time`,
        atLine(line, event.seq),
      ));
    }
    seen.add(event.data.path);
  }
  return problems;
}

function short(value: unknown): string {
  const text = value === undefined ? "missing" : JSON.stringify(value);
  return text.length > 80 ? text.slice(0, 77) + "…" : text;
}
