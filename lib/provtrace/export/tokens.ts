/**
 * Exact tokens per turn, for reinforcement learning: the prompt's and the completion's token IDs as the
 * provider returned them (never decoded and encoded again, which changes them), the completion's
 * log-probabilities, and a loss mask over prompt and completion: 1 for the tokens the model produced (this
 * turn's completion, and the earlier turns' completions that the prompt holds), 0 for the rest (system, user
 * and tool tokens).
 *
 * The earlier completions are found by the prefix property: each turn's prompt IDs start with the previous
 * turn's prompt and completion IDs. A turn whose prompt does not (a chat template that renders a reply
 * otherwise than it was produced, a context cut) breaks it: the check names the run, the turn and the first
 * token that differs, and that turn's mask marks its own completion alone.
 * @module
 */
import type { Call } from "./_calls.ts";

/** One turn's tokens, as the `steps` export writes them with `tokens`. */
export interface TokenTurn {
  prompt_token_ids: number[];
  completion_token_ids: number[];
  /** The log-probability of each completion token, where the provider gave them. */
  logprobs: number[] | null;
  /** One value per prompt token, then per completion token: 1 where the model produced the token. */
  loss_mask: number[];
  /** Whether the prompt starts with the previous turn's prompt and completion; null for a run's first turn. */
  prefix: boolean | null;
}

/** A turn whose prompt does not start with the previous turn's prompt and completion. */
export interface PrefixBreak {
  run_id: string;
  /** The turn's model call. */
  seq: number | null;
  /** The previous turn's model call. */
  previous_seq: number | null;
  /** The index of the first prompt token that differs (the prompt's length when it is shorter). */
  at: number;
  /** One line that says so. */
  problem: string;
}

/**
 * The token turns of calls given in run and seq order, and the turns that break the prefix property.
 *
 * @param calls The calls, in run and seq order.
 * @returns Each call's turn (null when its provider returned no token IDs), and every break.
 * @example
 * ```ts
 * import { tokenTurns } from "./tokens.ts";
 * const { breaks } = tokenTurns([]);
 * breaks.length; // 0
 * ```
 */
export function tokenTurns(calls: readonly Call[]): { turns: (TokenTurn | null)[]; breaks: PrefixBreak[] } {
  const turns: (TokenTurn | null)[] = [];
  const breaks: PrefixBreak[] = [];
  let prev: { run: string; call: Call; turn: TokenTurn } | null = null;
  for (const call of calls) {
    const t = call.tokens;
    if (!t || !t.prompt_token_ids || !t.completion_token_ids) {
      turns.push(null);
      continue;
    }
    const prompt = t.prompt_token_ids, completion = t.completion_token_ids;
    const before = prev && prev.run === call.run_id ? prev : null;
    let mask: number[];
    let prefix: boolean | null = null;
    if (before) {
      const expected = [...before.turn.prompt_token_ids, ...before.turn.completion_token_ids];
      const at = firstDifference(prompt, expected);
      prefix = at === null;
      if (at === null) {
        mask = [...before.turn.loss_mask, ...new Array(prompt.length - expected.length).fill(0)];
      } else {
        mask = new Array(prompt.length).fill(0);
        breaks.push({
          run_id: call.run_id,
          seq: call.seq,
          previous_seq: before.call.seq,
          at,
          problem:
            `run ${call.run_id}: the prompt of the model call at seq ${call.seq} does not start with the ` +
            `prompt and completion of the one at seq ${before.call.seq}: token ${at} differs (${
              at < prompt.length ? prompt[at] : "the prompt ends"
            }, not ${expected[at]}); its loss mask marks its own completion alone`,
        });
      }
    } else mask = new Array(prompt.length).fill(0);
    const turn: TokenTurn = {
      prompt_token_ids: prompt,
      completion_token_ids: completion,
      logprobs: t.logprobs,
      loss_mask: [...mask, ...new Array(completion.length).fill(1)],
      prefix,
    };
    turns.push(turn);
    prev = { run: call.run_id, call, turn };
  }
  return { turns, breaks };
}

/** The first index where `prompt` differs from `expected` over `expected`'s length, or null when it starts so. */
function firstDifference(prompt: number[], expected: number[]): number | null {
  for (let i = 0; i < expected.length; i++) {
    if (i >= prompt.length || prompt[i] !== expected[i]) return i;
  }
  return null;
}
