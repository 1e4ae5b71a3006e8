/**
 * A resumed run and the cut run it goes on from, checked as one history: the cut run is there, its chain holds
 * to its last whole line and it was never sealed; the two ran the same run file on the same inputs and prompt;
 * every model call and every tool call the cut run recorded is served in the resumed run, named by its
 * `served_from` and equal in its request, answer, arguments and result; and nothing in the resumed run claims to
 * be served from an event the cut run does not hold. `verifyRun` calls it for a run whose `run_created` has
 * `resumed_from`.
 * @module
 */
import { dirname, join } from "node:path";
import type { EvidenceEvent } from "../evidence/event.ts";
import { atLine, type Problem, problem } from "../evidence/problem.ts";
import type { ProblemCode } from "../evidence/problem_codes.ts";
import type { RunRecord } from "../evidence/record.ts";
import { readEventsText } from "../evidence/read_events.ts";
import { FileRunRecord } from "../store/file_store.ts";
import type { EvidenceStore } from "../store/store.ts";
import { stepsOf } from "../diff/run_steps.ts";

/** The events of the resumed run, with the line of each. */
interface Numbered {
  readonly events: readonly EvidenceEvent[];
  readonly lines: readonly number[];
}

/**
 * The problems of a resumed run taken with its cut run; none for a run that is not a resume.
 *
 * @param record The resumed run.
 * @param resumed Its events and the line of each.
 * @param store The store that holds both runs, else the cut run is looked for beside the resumed run's folder.
 * @returns The problems, each naming the resumed run's line where it shows.
 * @example
 * ```ts ignore
 * const problems = await resumedPairProblems(record, { events, lines }, store);
 * ```
 */
export async function resumedPairProblems(
  record: RunRecord,
  resumed: Numbered,
  store?: EvidenceStore,
): Promise<Problem[]> {
  const created = resumed.events[0];
  const cutId = created?.type === "run_created" ? created.data.resumed_from : undefined;
  if (typeof cutId !== "string") return [];
  const head = atLine(resumed.lines[0] ?? 1, 0);
  const say = (code: ProblemCode, message: string, where = head) => problem(code, message, where);
  const cut = await readCut(record, cutId, store);
  if (typeof cut === "string") return [say("resume.source_missing", cut)];
  const problems: Problem[] = [];
  if (await cut.record.manifestText().catch(() => null) !== null) {
    problems.push(say("resume.source_sealed", `run "${cutId}", which this run resumed as cut, is sealed`));
  }
  const broken = cut.read.problems.find((p) => p.code !== "events.cut" && p.code !== "manifest.missing");
  if (broken) {
    problems.push(
      say("resume.source_broken", `run "${cutId}", which this run resumes, does not hold: ${broken.message}`),
    );
    return problems;
  }
  problems.push(...setupProblems(cut.read.events, resumed, cutId));
  problems.push(...servedProblems(cut.read.events, resumed, cutId));
  return problems;
}

/** The cut run's record and its events, or why it cannot be read. */
async function readCut(
  record: RunRecord,
  cutId: string,
  store: EvidenceStore | undefined,
): Promise<{ record: RunRecord; read: ReturnType<typeof readEventsText> } | string> {
  let cut: RunRecord | null = null;
  try {
    cut = store ? await store.readRun(cutId) : null;
  } catch { /* looked for beside the folder below */ }
  if (!cut && record.folder !== null) cut = new FileRunRecord(cutId, join(dirname(record.folder), cutId));
  const text = cut ? await cut.eventsText().catch(() => null) : null;
  if (!cut || text === null) {
    return `run "${cutId}", which this run resumes, is not in the store: the history cannot be checked whole`;
  }
  return { record: cut, read: readEventsText(text) };
}

/** The run file, the inputs and the prompt: the same in both runs. */
function setupProblems(cut: readonly EvidenceEvent[], resumed: Numbered, cutId: string): Problem[] {
  const problems: Problem[] = [];
  const facts = (events: readonly EvidenceEvent[]) => {
    const staged = events.filter((e) => e.type === "input_staged").map((e) =>
      `${e.data.name}=${e.data.sha256}`
    );
    return {
      "the run file": events[0]?.payload ?? null,
      "the staged inputs": staged.sort().join(", "),
      "the rendered prompt": events.find((e) => e.type === "prompt_rendered")?.payload ?? null,
    };
  };
  const a = facts(cut);
  const b = facts(resumed.events);
  // A run cut before its prompt was rendered has none to compare.
  const cutBefore = !cut.some((e) => e.type === "prompt_rendered");
  for (const key of Object.keys(a) as (keyof typeof a)[]) {
    if (a[key] === b[key] || (cutBefore && key !== "the run file")) continue;
    problems.push(problem(
      "resume.setup_differs",
      `${key} of this run is not that of run "${cutId}", which it resumes`,
      atLine(resumed.lines[0] ?? 1, 0),
    ));
  }
  return problems;
}

/** The facts of a served event that must equal the recorded one's. */
function servedFacts(e: EvidenceEvent): string {
  const d = e.data;
  return JSON.stringify([
    e.type,
    e.payload,
    d.response_payload ?? null,
    d.result_payload ?? null,
    d.error ?? null,
    d.message ?? null,
    d.tool ?? null,
    d.call_id ?? null,
  ]);
}

/** Every recorded step of the cut run served in the resumed run, equal; nothing served that the cut run lacks. */
function servedProblems(cut: readonly EvidenceEvent[], resumed: Numbered, cutId: string): Problem[] {
  const problems: Problem[] = [];
  const servedAt = new Map<number, number>(); // the cut run's seq → the resumed run's index
  resumed.events.forEach((e, i) => {
    const from = e.data.served_from as { run_id?: unknown; seq?: unknown } | undefined;
    if (from?.run_id !== cutId || typeof from.seq !== "number") return;
    const source = cut[from.seq];
    const where = atLine(resumed.lines[i]!, e.seq);
    if (
      !source || source.seq !== from.seq || servedFacts(source) !== servedFacts(e) || servedAt.has(from.seq)
    ) {
      problems.push(problem(
        "resume.served_unknown",
        `${e.type} (seq ${e.seq}) says it was served from seq ${from.seq} of run "${cutId}", which does not record it so`,
        where,
      ));
      return;
    }
    servedAt.set(from.seq, i);
  });
  const steps = stepsOf(cut);
  const mustServe = steps.steps.flatMap((s) => [
    s.call,
    ...s.tools.filter((t) =>
      t.data.executed_by === "sandbox" || String(t.data.executed_by).startsWith("mcp:")
    ),
  ]);
  // A model call is served in its place: the cut run's kth model call is the resumed run's kth.
  const resumedCalls = stepsOf(resumed.events).steps.map((s) => resumed.events.indexOf(s.call));
  steps.steps.forEach((s, k) => {
    const at = servedAt.get(s.call.seq);
    if (at !== undefined && resumedCalls[k] !== at) servedAt.delete(s.call.seq);
  });
  for (const e of mustServe) {
    if (servedAt.has(e.seq)) continue;
    problems.push(problem(
      "resume.step_missing",
      `${e.type} (seq ${e.seq}) of run "${cutId}" is not served in its place in this run: an event of the history is lost`,
      atLine(resumed.lines.at(-1) ?? 1, resumed.events.at(-1)?.seq ?? null),
    ));
  }
  return problems;
}
