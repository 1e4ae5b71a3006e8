/**
 * The cost of a run, recomputed from its evidence alone: the price table it pinned (`run_created`'s
 * `price_table_payload`, the table's canonical JSON, so the payload's name is the table's SHA-256), and the usage
 * each `model_called` records (and each `step_failed` of a model call that records usage, as a stream that
 * failed after the provider counted it). What the run recorded (each call's `cost`, the total in its last
 * event's `cost`) is compared with the recomputation; a difference is a problem of the `cost` family.
 * @module
 */
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import { atLine, type Problem, problem } from "../evidence/problem.ts";
import { callCost, formatCost, parseCost, recordedUsage, type TokenUsage } from "./call_cost.ts";
import { PriceTable } from "./price_table.ts";

/** One model call of a run, priced. */
export interface PricedCall {
  /** The event's seq. */
  seq: number;
  /** `model_called`, or `step_failed` for a call that failed after its usage was counted. */
  type: string;
  provider: string | null;
  model: string | null;
  answered_by: string | null;
  usage: TokenUsage;
  /** The cost recomputed from the usage and the pinned table, or null when the table does not list the model. */
  cost: string | null;
  /** The cost the event records (null: the run found no price); absent when it records none. */
  recorded?: string | null;
  /** The table's entry that priced it, `provider:model`, or null. */
  priced_as: string | null;
}

/** A run's cost, recomputed. */
export interface RunCost {
  /** The pinned table's SHA-256 and where it came from, or null when the run pins none. */
  table: { sha256: string; source: string | null; currency: string } | null;
  /** Each model call. */
  calls: PricedCall[];
  /** The sum of the calls' costs (calls the table does not list count 0). */
  total: string;
  /** The calls the table does not list. */
  unpriced: number;
  /** The sum of the calls' usage. */
  tokens: TokenUsage;
  /** The total the run recorded in its last event, or null. */
  recorded: { [key: string]: Json } | null;
  /** Where the recorded costs and the recomputation differ. */
  problems: Problem[];
}

/** What the recomputation reads: a payload by its SHA-256. */
export type PayloadReader = (sha256: string) => Promise<Uint8Array>;

/**
 * Recomputes a run's cost from its events and the table it pinned.
 *
 * @param events The run's events, in order.
 * @param payload Reads a payload of the run.
 * @returns The calls, the total, and where the recorded costs differ.
 * @example
 * ```ts
 * import { FileStore } from "../store/file_store.ts";
 * import { readEventsText } from "../evidence/read_text.ts";
 * import { runCost } from "./run_cost.ts";
 * await using store = new FileStore({ runs: "fixtures/runs" });
 * const record = await store.readRun("run-20261129T120000Z-0badc0de");
 * const { events } = readEventsText((await record.eventsText())!);
 * const cost = await runCost(events, (sha) => record.payload(sha));
 * cost.total; // "0" for a run of a scripted model
 * ```
 */
export async function runCost(events: readonly EvidenceEvent[], payload: PayloadReader): Promise<RunCost> {
  const problems: Problem[] = [];
  const created = events.find((e) => e.type === "run_created");
  const pinned = await pinnedTable(created, payload, problems);
  const priced = priceCalls(events, pinned?.table ?? null);
  let noTable = false;
  for (const call of priced.calls) {
    if (call.recorded === undefined || call.recorded === call.cost) continue;
    const where = atLine(call.seq + 1, call.seq);
    if (pinned === null) {
      if (!noTable && created?.data.price_table_payload === undefined) {
        problems.push(
          problem(
            "cost.no_table",
            `seq ${call.seq} records a cost, but run_created pins no price table`,
            where,
          ),
        );
        noTable = true;
      }
      continue;
    }
    problems.push(problem(
      "cost.call_differs",
      `seq ${call.seq} (${call.type}) records cost ${call.recorded}, but its usage priced by the pinned table is ${
        call.cost ?? "unpriced"
      }`,
      where,
    ));
  }
  const result: RunCost = {
    table: pinned
      ? { sha256: pinned.table.sha256, source: pinned.source, currency: pinned.table.currency }
      : null,
    ...priced,
    recorded: null,
    problems,
  };
  totalProblems(events, result);
  return result;
}

/**
 * The model calls of some events, each priced by a table, and their sums: what a run adds up as it records, and
 * what {@linkcode runCost} recomputes.
 *
 * @param events Events of a run (the others are skipped).
 * @param table The price table, or null.
 * @returns The calls, the total, the unpriced calls and the tokens.
 */
export function priceCalls(
  events: readonly EvidenceEvent[],
  table: PriceTable | null,
): Pick<RunCost, "calls" | "total" | "unpriced" | "tokens"> {
  const calls: PricedCall[] = [];
  const tokens: TokenUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
  let total = 0n;
  let unpriced = 0;
  for (const e of events) {
    if (!isModelCall(e)) continue;
    const call = priceCall(e, table);
    calls.push(call);
    for (const k of Object.keys(tokens) as (keyof TokenUsage)[]) tokens[k] += call.usage[k];
    if (call.cost === null) unpriced++;
    else total += parseCost(call.cost)!;
  }
  return { calls, total: formatCost(total), unpriced, tokens };
}

/**
 * The cost of a model call from the data its event records (provider, model, answered_by and usage), priced by
 * a table: what the recorder of a model call writes as its `cost`.
 *
 * @param data The data of a `model_called` event, without its cost.
 * @param table The run's price table.
 * @returns The cost as a decimal text, or null when the table does not list the model.
 */
export function dataCost(data: { [key: string]: Json }, table: PriceTable): string | null {
  const str = (v: Json | undefined) => (typeof v === "string" ? v : null);
  const price = table.priceOf({
    provider: str(data.provider),
    model: str(data.model),
    answeredBy: str(data.answered_by),
  });
  return price ? formatCost(callCost(recordedUsage(data), price).total) : null;
}

/** True for an event that records a model call's usage. */
function isModelCall(e: EvidenceEvent): boolean {
  if (e.type === "model_called") return true;
  return e.type === "step_failed" && e.data.step === "model_called" &&
    (typeof e.data.input_tokens === "number" || typeof e.data.output_tokens === "number");
}

function priceCall(e: EvidenceEvent, table: PriceTable | null): PricedCall {
  const d = e.data;
  const str = (v: Json | undefined) => (typeof v === "string" ? v : null);
  const usage = recordedUsage(d);
  const price = table?.priceOf({
    provider: str(d.provider),
    model: str(d.model),
    answeredBy: str(d.answered_by),
  });
  return {
    seq: e.seq,
    type: e.type,
    provider: str(d.provider),
    model: str(d.model),
    answered_by: str(d.answered_by),
    usage,
    cost: price ? formatCost(callCost(usage, price).total) : null,
    ...(d.cost === undefined
      ? {}
      : { recorded: d.cost === null || typeof d.cost === "string" ? d.cost : JSON.stringify(d.cost) }),
    priced_as: price ? `${price.provider}:${price.model}` : null,
  };
}

/** The table `run_created` pins, or null; a pin that cannot be read is a problem. */
async function pinnedTable(
  created: EvidenceEvent | undefined,
  payload: PayloadReader,
  problems: Problem[],
): Promise<{ table: PriceTable; source: string | null } | null> {
  const sha = created?.data.price_table_payload;
  if (typeof sha !== "string") return null;
  const where = atLine(created!.seq + 1, created!.seq);
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(await payload(sha));
    const table = PriceTable.parse(text, `the price table ${sha}`);
    if (table.sha256 !== sha) {
      throw new Error(`its canonical JSON hashes to ${table.sha256}, not to the name the run pins`);
    }
    const source = created!.data.price_table_source;
    return { table, source: typeof source === "string" ? source : null };
  } catch (error) {
    problems.push(problem(
      "cost.table_unreadable",
      `run_created pins the price table ${sha}, which cannot be read: ${(error as Error).message}`,
      where,
    ));
    return null;
  }
}

/**
 * The total of the run's last event (`data.cost`), compared with the recomputation: the amount, the calls, the
 * calls left unpriced and each sum of tokens.
 */
function totalProblems(events: readonly EvidenceEvent[], result: RunCost): void {
  const last = events.at(-1);
  if (!last || (last.type !== "run_completed" && last.type !== "run_failed")) return;
  const recorded = last.data.cost;
  if (recorded === undefined) return;
  const where = atLine(events.length, last.seq);
  if (typeof recorded !== "object" || recorded === null || Array.isArray(recorded)) {
    result.problems.push(
      problem("cost.total_differs", `${last.type} records a cost that is not an object`, where),
    );
    return;
  }
  result.recorded = recorded;
  if (result.table === null && recorded.amount !== null && recorded.amount !== undefined) {
    result.problems.push(
      problem("cost.no_table", `${last.type} records a cost, but run_created pins no price table`, where),
    );
    return;
  }
  const expected = costTotal(result);
  const differs = Object.entries(expected).filter(([k, v]) =>
    JSON.stringify(recorded[k] ?? null) !== JSON.stringify(v)
  );
  if (differs.length) {
    result.problems.push(problem(
      "cost.total_differs",
      `${last.type} records ${
        differs.map(([k]) => `${k} ${JSON.stringify(recorded[k] ?? null)}`).join(", ")
      }, ` +
        `but the model calls recomputed give ${
          differs.map(([k, v]) => `${k} ${JSON.stringify(v)}`).join(", ")
        }`,
      where,
    ));
  }
}

/**
 * The total a run records in its last event (`data.cost`), from a recomputation or as the run adds it up: the
 * amount (null without a table), the currency, the calls, the calls the table does not list, and the tokens.
 *
 * @param cost The run's cost.
 * @returns The object a run's last event records as `cost`.
 */
export function costTotal(cost: Pick<RunCost, "table" | "calls" | "total" | "unpriced" | "tokens">): {
  [key: string]: Json;
} {
  return {
    amount: cost.table === null ? null : cost.total,
    currency: cost.table?.currency ?? null,
    calls: cost.calls.length,
    unpriced_calls: cost.table === null ? cost.calls.length : cost.unpriced,
    input_tokens: cost.tokens.input,
    output_tokens: cost.tokens.output,
    cache_read_tokens: cost.tokens.cacheRead,
    cache_write_tokens: cost.tokens.cacheWrite,
    reasoning_tokens: cost.tokens.reasoning,
  };
}
