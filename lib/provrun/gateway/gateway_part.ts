/**
 * The model gateway as a part of a run: before the backend starts (`prepareBackend`) it starts the gateway, points
 * the agent at it (`agent.provider.base_url`) and gives it the run's token in place of the key (the real key's
 * variable is hidden from the backend and the program), and tells `sandbox_started` the gateway's address and the
 * key's variable, never its value. Before the run's last event it closes the gateway (every call recorded), and
 * cross-checks what the gateway saw with the program's session files and tool calls: each difference is a
 * `telemetry_problem`. The run's last event counts the gateway's calls and refusals.
 * @module
 */
import { join } from "node:path";
import { readRegularFile } from "../../provevi/evidence/open_file.ts";
import { PROGRAM_FILE_MAX_BYTES } from "../backends/_program_files.ts";
import type { EvidenceEvent, Json } from "../../provevi/mod.ts";
import type { TokenUsage } from "../../provevi/cost/mod.ts";
import { DEFAULT_MODEL_BYTES } from "../backends/model_limit.ts";
import { parseRoute, routeKeyName } from "../backends/models.ts";
import type { AgentSpec } from "../run/run_file.ts";
import type { BackendSetup, PartRun, RunPart } from "../run/run_part.ts";
import type { RecordedCall } from "./gateway_call.ts";
// The gateway itself is imported when a run uses one (an agent program's, or `gateway: true`): the part is
// in every run, and a `call` or `agent` run, provr's common path, never loads the gateway's modules (#25).
import type { GatewayOptions, ModelGateway } from "./gateway.ts";

/** The variable that carries the run's token to the backend and the program, in place of the key's. */
export const GATEWAY_TOKEN_VARIABLE = "PROVR_GATEWAY_TOKEN";

/** The most `telemetry_problem` events the cross-check writes; the rest are counted in the last one. */
const MAX_PROBLEMS = 50;

/** Options of the part, for tests and benchmarks: the gateway's `fetch` and timeouts. */
export type GatewayPartOptions = Partial<
  Pick<GatewayOptions, "fetch" | "firstByteMs" | "idleMs" | "concurrent" | "requestBytes">
>;

/**
 * True when a run's model calls go through the gateway: always for an agent program, and for the `agent` and
 * `call` backends with `agent.gateway: true`; never for a `test:` model, which makes no request.
 *
 * @param agent The run file's agent section.
 * @returns Whether the run gets a gateway.
 */
export function usesGateway(agent: AgentSpec): boolean {
  if (agent.model.startsWith("test:")) return false;
  return agent.backend === "claude-code" || agent.backend === "codex" || agent.gateway === true;
}

/** The model gateway of one run. */
export class GatewayPart implements RunPart {
  readonly name = "gateway";
  readonly #price: ((data: { [key: string]: Json }) => string | null) | null;
  readonly #options: GatewayPartOptions;
  #gateway: ModelGateway | null = null;
  readonly #calls: RecordedCall[] = [];
  readonly #sessions: { kind: string; path: string }[] = [];
  readonly #programTools: { id: string; seq: number }[] = [];
  /** The description of each tool the program's requests offered, for its tool calls' spans. */
  readonly #tools = new Map<string, string>();
  /** The tool each call ID asked for, as the model named it (a program's hook may name it otherwise). */
  readonly #asked = new Map<string, string>();

  /**
   * @param price The run's price of a call's data, or null.
   * @param options The gateway's `fetch` and timeouts (tests).
   */
  constructor(
    price: ((data: { [key: string]: Json }) => string | null) | null,
    options: GatewayPartOptions = {},
  ) {
    this.#price = price;
    this.#options = options;
  }

  /** The running gateway, once the backend is prepared. */
  get gateway(): ModelGateway | null {
    return this.#gateway;
  }

  async prepareBackend(setup: BackendSetup, run: PartRun): Promise<BackendSetup> {
    const agent = setup.agent;
    if (!usesGateway(agent)) return setup;
    const { ModelGateway } = await import("./gateway.ts");
    const route = parseRoute(agent);
    const provider = route.provider as GatewayOptions["provider"];
    const keyName = routeKeyName(agent);
    const env = setup.env ?? ((name: string) => Deno.env.get(name));
    const upstream = agent.provider?.base_url ??
      (provider === "anthropic" ? "https://api.anthropic.com" : "https://api.openai.com/v1");
    const gateway = this.#gateway = ModelGateway.start({
      ...this.#options,
      provider,
      upstream,
      key: keyName === null ? null : readKey(env, keyName),
      ...(keyName === null ? {} : { keyVariable: keyName }),
      recorder: run.ctx.recorder,
      component: "ModelGateway",
      responseBytes: agent.limits?.model_bytes ?? DEFAULT_MODEL_BYTES,
      price: this.#price,
      onCall: (call) => {
        this.#calls.push(call);
        for (const t of call.summary?.toolCalls ?? []) {
          if (this.#asked.size < 100_000) this.#asked.set(t.id, t.name);
        }
      },
      conversationId: run.file.data.run.session_id ?? null,
      onTools: (tools) => {
        for (const [name, description] of tools) {
          if (this.#tools.size < 10_000) this.#tools.set(name, description);
        }
      },
    });
    const url = provider === "anthropic" ? gateway.url : gateway.openaiUrl;
    return {
      ...setup,
      agent: { ...agent, provider: { base_url: url, api_key_env: GATEWAY_TOKEN_VARIABLE } },
      env: (
        name,
      ) => (name === GATEWAY_TOKEN_VARIABLE ? gateway.token : name === keyName ? undefined : env(name)),
      facts: {
        ...setup.facts,
        gateway: {
          url,
          provider,
          upstream: withoutCredentials(upstream),
          key_variable: keyName,
          token_variable: GATEWAY_TOKEN_VARIABLE,
        },
      },
      modelCallsRecorded: true,
      toolDescription: (name, callId) =>
        this.#tools.get(name) ?? this.#tools.get(this.#asked.get(callId ?? "") ?? "") ?? null,
    };
  }

  onEvent(event: EvidenceEvent): void {
    if (!this.#gateway) return;
    if (event.type === "trace_imported" && typeof event.data.path === "string") {
      const kind = String(event.data.kind);
      if (kind === "transcript" || kind === "rollout") this.#sessions.push({ kind, path: event.data.path });
    } else if (event.type === "tool_called" && event.data.executed_by === "program") {
      if (typeof event.data.call_id === "string") {
        this.#programTools.push({ id: event.data.call_id, seq: event.seq });
      }
    }
  }

  async beforeLastEvent(run: PartRun): Promise<void> {
    if (!this.#gateway) return;
    await this.#gateway.close(); // every call under way is recorded before the cross-check
    const problems = [...await this.#sessionProblems(run.ctx.folder), ...this.#toolProblems()];
    const { recorder } = run.ctx;
    for (const [i, problem] of problems.slice(0, MAX_PROBLEMS).entries()) {
      const more = i === MAX_PROBLEMS - 1 && problems.length > MAX_PROBLEMS
        ? ` (and ${problems.length - MAX_PROBLEMS} more differences, not recorded one by one)`
        : "";
      await recorder.record({
        type: "telemetry_problem",
        component: "ModelGateway",
        data: { problem: problem + more, library: "gateway" },
      });
    }
  }

  /** The differences between the gateway's responses and each session file of the program. */
  async #sessionProblems(folder: string): Promise<string[]> {
    const { matchProblem, matchSession, sessionEntries } = await import("./session_match.ts");
    const responses = this.#calls.filter((c) => c.ok && c.responseId !== null).map((c) => ({
      seq: c.seq,
      id: c.responseId!,
      usage: c.summary?.usage as TokenUsage,
    }));
    const problems: string[] = [];
    const byKind = new Map<string, string[]>();
    for (const s of this.#sessions) byKind.set(s.kind, [...(byKind.get(s.kind) ?? []), s.path]);
    for (const [kind, paths] of byKind) {
      const entries = [];
      for (const path of paths) {
        // as the import read it: a plain file, no link, no FIFO's writer waited for, at most its cap
        const bytes = await readRegularFile(join(folder, path), PROGRAM_FILE_MAX_BYTES).catch(() => null);
        const text = bytes === null ? "" : new TextDecoder().decode(bytes);
        entries.push(...sessionEntries(kind, text));
      }
      for (const row of matchSession(kind, responses, entries)) {
        const problem = matchProblem(kind, row);
        if (problem) problems.push(problem);
      }
    }
    return problems;
  }

  /** A tool call of the program that no response the gateway recorded asked for. */
  #toolProblems(): string[] {
    const asked = new Set(this.#calls.flatMap((c) => c.summary?.toolCalls.map((t) => t.id) ?? []));
    return this.#programTools.filter((t) => !asked.has(t.id)).map((t) =>
      `the program reported tool call ${t.id} (seq ${t.seq}), which no model response the gateway recorded asked for`
    );
  }

  endFacts(): { [key: string]: Json } {
    if (!this.#gateway) return {};
    const { calls, refused, passed } = this.#gateway.counts;
    return { gateway: { calls, refused, passed } };
  }

  async close(): Promise<void> {
    await this.#gateway?.close();
  }
}

function readKey(env: (name: string) => string | undefined, name: string): string | null {
  try {
    return env(name) ?? null;
  } catch {
    return null;
  }
}

/** A URL without a user or password, for the record. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.href;
  } catch {
    return url;
  }
}
