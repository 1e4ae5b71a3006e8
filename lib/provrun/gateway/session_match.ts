/**
 * The cross-check of what the gateway saw against the program's own session file: each model response the
 * gateway recorded should be one entry of Claude Code's transcript (an `assistant` message, by its message ID;
 * its content blocks are lines of their own, one usage; the messages it makes itself for an API error, model
 * `<synthetic>`, are not responses) or of Codex's rollout (a `token_usage_record`, by its
 * response ID), in the same order and with the same tokens; and each entry one response the gateway recorded.
 * A difference is a line of the match, and a problem the run records as `telemetry_problem`.
 * @module
 */
import type { TokenUsage } from "../../provevi/cost/mod.ts";
import { usageFrom } from "../../provevi/cost/mod.ts";
import { obj, parseJson, str } from "./provider_api.ts";

/** One model response as a session file records it. */
export interface SessionEntry {
  id: string;
  usage: TokenUsage;
}

/** One model response as the gateway recorded it. */
export interface GatewayEntry {
  seq: number | null;
  id: string;
  usage: TokenUsage;
}

/** A line of the match. */
export interface MatchRow {
  /** The response's ID. */
  id: string;
  /** The gateway's `model_called` seq, or null when the gateway has no such response. */
  seq: number | null;
  gateway: TokenUsage | null;
  session: TokenUsage | null;
  /** `match`, `tokens differ`, `order differs`, `gateway only` or `session only`. */
  verdict: string;
}

/**
 * The model responses a session file records, in order, once each.
 *
 * @param kind `transcript` (Claude Code) or `rollout` (Codex).
 * @param text The file's text.
 * @returns The entries.
 */
export function sessionEntries(kind: string, text: string): SessionEntry[] {
  const seen = new Map<string, SessionEntry>();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const j = obj(parseJson(line));
    if (kind === "transcript" && j.type === "assistant") {
      const message = obj(j.message);
      // Claude Code writes an API error as an assistant message of its own: no model answered it.
      if (j.isApiErrorMessage === true || message.model === "<synthetic>") continue;
      const id = str(message.id);
      // The content blocks of one message are lines of their own, each with the message's usage so far.
      if (id && message.usage !== undefined) {
        seen.set(id, { id, usage: usageFrom("anthropic", message.usage) });
      }
    } else if (kind === "rollout" && j.type === "token_usage_record") {
      const payload = obj(j.payload);
      const id = str(payload.response_id);
      const u = obj(payload.usage);
      if (id) {
        seen.set(id, {
          id,
          usage: usageFrom("openai-responses", {
            input_tokens: u.input_tokens ?? 0,
            input_tokens_details: { cached_tokens: u.cached_input_tokens ?? 0 },
            output_tokens: u.output_tokens ?? 0,
            output_tokens_details: { reasoning_tokens: u.reasoning_output_tokens ?? 0 },
          }),
        });
      }
    }
  }
  return [...seen.values()];
}

function sameTokens(a: TokenUsage, b: TokenUsage, kind: string): boolean {
  // Claude Code's transcript holds no reasoning count of its own when the API gives none; Codex's rollout no cache write.
  const keys: (keyof TokenUsage)[] = kind === "transcript"
    ? ["input", "output", "cacheRead", "cacheWrite"]
    : ["input", "output", "cacheRead", "reasoning"];
  return keys.every((k) => a[k] === b[k]);
}

/**
 * Matches the gateway's responses with a session file's, one to one.
 *
 * @param kind The session file's kind.
 * @param gateway The responses the gateway recorded, in order.
 * @param session The session file's entries, in order.
 * @returns A row per response, in the gateway's order then the session's leftovers.
 */
export function matchSession(kind: string, gateway: GatewayEntry[], session: SessionEntry[]): MatchRow[] {
  const position = new Map(session.map((e, i) => [e.id, i]));
  const rows: MatchRow[] = [];
  const matched = new Set<string>();
  let last = -1;
  for (const g of gateway) {
    const at = position.get(g.id);
    if (at === undefined) {
      rows.push({ id: g.id, seq: g.seq, gateway: g.usage, session: null, verdict: "gateway only" });
      continue;
    }
    matched.add(g.id);
    const s = session[at]!;
    const verdict = at < last
      ? "order differs"
      : sameTokens(g.usage, s.usage, kind)
      ? "match"
      : "tokens differ";
    last = Math.max(last, at);
    rows.push({ id: g.id, seq: g.seq, gateway: g.usage, session: s.usage, verdict });
  }
  for (const s of session) {
    if (!matched.has(s.id)) {
      rows.push({ id: s.id, seq: null, gateway: null, session: s.usage, verdict: "session only" });
    }
  }
  return rows;
}

/**
 * The problem a row of the match says, or null for a match.
 *
 * @param kind The session file's kind.
 * @param row The row.
 * @returns One line, or null.
 */
export function matchProblem(kind: string, row: MatchRow): string | null {
  const tokens = (u: TokenUsage | null) => (u ? `${u.input} in, ${u.output} out` : "none");
  switch (row.verdict) {
    case "match":
      return null;
    case "gateway only":
      return `the model gateway recorded response ${row.id} (seq ${row.seq}), which the program's ${kind} does not hold`;
    case "session only":
      return `the program's ${kind} holds model response ${row.id}, which the model gateway did not record`;
    case "order differs":
      return `the program's ${kind} holds model response ${row.id} out of the order the model gateway recorded`;
    default:
      return `model response ${row.id}: the model gateway recorded ${
        tokens(row.gateway)
      } tokens, the program's ${kind} ${tokens(row.session)}`;
  }
}
