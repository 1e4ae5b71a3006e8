/**
 * A run summed up for the runs page and its search: its verdict (the run's whole check, as `prove verify` makes
 * it), its model and tool calls, errors, tokens and cost, the models and tools it used, and the text a search
 * reads, each as far as the viewer's level for the run shows it. At `names` the text is the run's names (its ID,
 * agent, models, tools); at `bodies` it adds the prompt, the answers and the tools' arguments, each cut. A run
 * that does not verify gives only its structure.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import type { RunRecord } from "../evidence/record.ts";
import { replyOf } from "../live/feed.ts";
import { type EventItem, shownAt } from "../live/live.ts";
import { verifyRun, type VerifyRunOptions } from "../runs/verify_run.ts";
import type { EvidenceStore } from "../store/store.ts";
import type { Level } from "../telemetry/attributes.ts";
import type { TelemetryPolicy } from "../telemetry/policy.ts";
import { callsOf } from "./run_calls.ts";
import { factsOf } from "./run_facts.ts";
import { type VerdictKind, verdictKind } from "./run_verdict.ts";
import { answerPreview, payloadHead } from "./view_payload.ts";
import { viewerLevel } from "./viewer_level.ts";

/** A run summed up. */
export interface RunDigest {
  run_id: string;
  verdict: VerdictKind;
  /** How many problems the check found. */
  problems: number;
  level: Level | null;
  model_calls: number;
  tool_calls: number;
  /** Failed steps and tool calls, refusals, telemetry problems. */
  errors: number;
  tokens: { input: number; output: number } | null;
  /** The cost as a decimal text, and its currency. */
  cost: { amount: string; currency: string | null } | null;
  /** The models and tools the run used, as the level names them. */
  models: string[];
  tools: string[];
  /** What a search reads of the run, at the level. */
  text: string;
}

/** Options of {@linkcode runDigest}. */
export interface RunDigestOptions {
  policy: TelemetryPolicy;
  catalog?: VerifyRunOptions["catalog"];
  /** Leave out the text (for the runs page's verdicts, which never search). */
  text?: boolean;
}

/** How much of a run's content a search reads. */
const TEXT = { prompt: 2048, answer: 2048, answers: 2, args: 512, tools: 8, total: 8192 } as const;

/** Events whose content the digest reads: names, tokens and costs live there. */
const READ = new Set([
  "run_created",
  "model_called",
  "tool_called",
  "step_failed",
  "span_recorded",
  "hook_called",
]);

async function texts(record: RunRecord, events: readonly EvidenceEvent[]): Promise<string[]> {
  const out: string[] = [];
  const head = async (sha: string, bytes: number) => {
    const { head } = await payloadHead(record, sha, { bytes });
    return new TextDecoder().decode(head, { stream: true });
  };
  const prompt = events.find((e) => e.type === "prompt_rendered" && e.payload);
  if (prompt) out.push(await head(prompt.payload!, TEXT.prompt).catch(() => ""));
  const replies = events.flatMap((e) => replyOf(e) ?? []).slice(-TEXT.answers);
  for (const reply of replies) {
    const answer = await answerPreview(record, reply).catch(() => null);
    if (answer) out.push(answer.text.slice(0, TEXT.answer));
  }
  const tools = events.filter((e) => e.type === "tool_called" && e.payload).slice(0, TEXT.tools);
  for (const t of tools) out.push(await head(t.payload!, TEXT.args).catch(() => ""));
  return out;
}

/**
 * Sums a run up: its check, and what the level shows of it.
 *
 * @param store The store (its rows are checked with the run, as `prove verify` does).
 * @param record The run.
 * @param options The viewer's policy and catalog, and whether to read the text.
 * @returns The digest.
 */
export async function runDigest(
  store: EvidenceStore,
  record: RunRecord,
  options: RunDigestOptions,
): Promise<RunDigest> {
  const sealed = (await record.manifestText().catch(() => null)) !== null;
  let events: readonly EvidenceEvent[] = [];
  const check = sealed
    ? await verifyRun(record, {
      store,
      ...(options.catalog ? { catalog: options.catalog } : {}),
      extraChecks: [(_record, read) => {
        events = read;
        return Promise.resolve([]);
      }],
    })
    : null;
  const verdict = check === null
    ? "running"
    : verdictKind({ checked: true, ok: check.ok, problems: check.problems });
  const trusted = verdict === "verified" || verdict === "cannot_check";
  const { level } = await viewerLevel(options.policy, record, events[0]);
  const shownLevel = trusted ? level : null;
  const shown: (EventItem | null)[] = [];
  for (const e of events) {
    shown.push(
      READ.has(e.type) || e === events.at(-1) ? await shownAt(e, shownLevel).catch(() => null) : null,
    );
  }
  const calls = callsOf(events, shown, shownLevel);
  const facts = factsOf(events[0], shownLevel);
  const names = (kind: "model" | "tool") => [
    ...new Set(calls.calls.flatMap((c) => (c.kind === kind && c.name !== null ? [c.name] : []))),
  ];
  const models = [...new Set([...(facts.model ? [facts.model] : []), ...names("model")])];
  const tools = names("tool");
  let text = [record.runId, facts.agent, facts.experiment, ...models, ...tools].filter(Boolean).join(" ");
  if (options.text !== false && shownLevel === "bodies") {
    text = (text + "\n" + (await texts(record, events)).join("\n")).slice(0, TEXT.total);
  }
  return {
    run_id: record.runId,
    verdict,
    problems: check?.problems.length ?? 0,
    level,
    model_calls: calls.calls.filter((c) => c.kind === "model").length,
    tool_calls: calls.calls.filter((c) => c.kind === "tool").length,
    errors: calls.errors.length,
    tokens: calls.tokens,
    cost: calls.cost,
    models,
    tools,
    text,
  };
}
