/**
 * A run's evidence read as a journal, for serving it again: each model call with its recorded request and
 * answer, each tool call with its arguments and result (by call ID), the tools as recorded, the run file, and
 * the calls requested but not recorded as done. It refuses, in one line naming what is missing, a run whose
 * evidence cannot be served: one that does not verify (replay, fork), one that is not cut (resume), a payload
 * that is missing or changed, a backend whose model calls provr does not make.
 * @module
 */
import type { Catalog } from "../../provcat/mod.ts";
import type { EvidenceEvent, Json } from "../../provevi/evidence/event.ts";
import { payloadsOf } from "../../provevi/evidence/event.ts";
import type { RunRecord } from "../../provevi/evidence/record.ts";
import { parseJson, TooDeepJson, TooHeavyJson } from "../../provevi/evidence/json_depth.ts";
import { readEventsText } from "../../provevi/evidence/read_events.ts";
import { runWriterState } from "../../provevi/evidence/writer_process.ts";
import { askedCallIds, type ModelStep, stepsOf } from "../../provevi/diff/run_steps.ts";
import { verifyRun } from "../../provevi/runs/verify_run.ts";
import type { RecordedTool } from "../run/run_part.ts";
import { RunNotReplayable } from "./replay_errors.ts";

/** What a journal is read for: a replay or a fork serve an ended run that verifies; a resume, a cut run. */
export type JournalPurpose = "replay" | "fork" | "resume";

/** One recorded model call. */
export interface RecordedCall {
  /** The call's number, from 1. */
  readonly n: number;
  /** Its event: `model_called`, or the `step_failed` of a call that failed. */
  readonly event: EvidenceEvent;
  /** The request's `params`, as the capture recorded them. */
  readonly params: Json;
  /** The request's body on the wire, when the provider gave it. */
  readonly wire: Json | undefined;
  /** The answer (`response_payload`), or null for a call that failed before it answered. */
  readonly reply: Json | null;
  /** True when the call streamed. */
  readonly streamed: boolean;
  /** The exact tokens the provider gave (`tokens_payload`) of a call that did not stream, or null. */
  readonly tokens: Json | null;
}

/** One recorded tool call. */
export interface RecordedToolCall {
  readonly event: EvidenceEvent;
  /** The model step whose answer asked for it, from 1. */
  readonly step: number;
  /** Its arguments. */
  readonly args: Json;
  /** Its result's JSON text, or null for a call that failed. */
  readonly resultText: string | null;
}

/** A tool call that a recorded answer asked for and that has no `tool_called`: it may or may not have run. */
export interface PendingCall {
  readonly callId: string;
  readonly tool: string;
  /** The model step that asked for it, from 1. */
  readonly step: number;
}

/** A run's evidence, ready to be served. */
export class Journal {
  /** The model calls, in order. */
  readonly calls: RecordedCall[] = [];
  /** The tool calls that a sandbox or an MCP server ran, by call ID, in the order recorded. */
  readonly toolCalls: Map<string, RecordedToolCall[]> = new Map();
  /** The model step whose answer asked for each call ID. */
  readonly stepOfCall: Map<string, number> = new Map();
  /** The tools as `sandbox_started` recorded them, or null for a run without tools (the call backend). */
  tools: RecordedTool[] | null = null;

  private constructor(
    /** The run as its store reads it. */
    readonly record: RunRecord,
    /** Its events (for a cut run, the whole lines). */
    readonly events: EvidenceEvent[],
    /** Its steps. */
    readonly steps: ModelStep[],
  ) {}

  /** The run's ID. */
  get runId(): string {
    return this.record.runId;
  }

  /** The run's `run_created`. */
  get created(): EvidenceEvent {
    return this.events[0]!;
  }

  /** The run file as recorded (`run_created`'s payload) and where it was read (null: a program's). */
  async runFile(): Promise<{ text: string; path: string | null }> {
    const path = typeof this.created.data.run_file === "string" ? this.created.data.run_file : null;
    return { text: await this.#text(this.created.payload!, "the run file"), path };
  }

  /**
   * Reads a run's evidence to serve it.
   *
   * @param record The run.
   * @param options What for, and the catalog that checks its bundle and experiment (replay, fork).
   * @returns The journal.
   * @throws RunNotReplayable naming what is missing.
   */
  static async read(
    source: RunRecord,
    options: { purpose: JournalPurpose; catalog?: Catalog | undefined },
  ): Promise<Journal> {
    // What is checked is what is served: the events and the manifest are read once, so a file swapped between
    // the check and the serving is never read (the payloads' bytes are hashed at each read).
    const record = snapshot(source);
    const events = options.purpose === "resume"
      ? await cutEvents(record)
      : await verifiedEvents(record, options.catalog);
    const created = events[0];
    if (created?.type !== "run_created") {
      throw new RunNotReplayable(`run "${record.runId}" has no run_created: there is nothing to serve`);
    }
    const backend = String(created.data.backend);
    if (backend !== "agent" && backend !== "call") {
      throw new RunNotReplayable(
        `run "${record.runId}" ran the ${backend} backend, whose agent program makes its own model calls: ` +
          `provr serves the model answers of the agent and call backends only; prove diff compares what it recorded`,
      );
    }
    if (events.some((e) => e.data.via === "gateway" && e.component === "ModelGateway")) {
      throw new RunNotReplayable(
        `run "${record.runId}" recorded its model calls at the model gateway (agent.gateway), as the provider's ` +
          `requests and answers, which provr does not serve: prove diff compares what it recorded`,
      );
    }
    const journal = new Journal(record, events, stepsOf(events).steps);
    await journal.#load();
    return journal;
  }

  /** The calls that the recorded answers asked for and that no `tool_called` records. */
  pending(): PendingCall[] {
    const done = new Set(
      this.events.filter((e) => e.type === "tool_called").map((e) => String(e.data.call_id)),
    );
    const out: PendingCall[] = [];
    for (const call of this.calls) {
      if (call.event.type !== "model_called") continue;
      const asked = Array.isArray(call.event.data.tool_calls) ? call.event.data.tool_calls as Json[] : [];
      for (const c of asked) {
        const { id, name } = (c ?? {}) as { id?: unknown; name?: unknown };
        if (typeof id === "string" && !done.has(id)) {
          out.push({ callId: id, tool: String(name), step: call.n });
        }
      }
    }
    return out;
  }

  /** Takes the next recorded tool call of a call ID, or null when none is left. */
  takeToolCall(callId: string): RecordedToolCall | null {
    return this.toolCalls.get(callId)?.shift() ?? null;
  }

  async #load(): Promise<void> {
    for (const step of this.steps) {
      for (const id of askedCallIds(step.call)) if (!this.stepOfCall.has(id)) this.stepOfCall.set(id, step.n);
      this.calls.push(await this.#call(step));
      for (const t of step.tools) await this.#tool(t, step.n);
    }
    const started = this.events.find((e) => e.type === "sandbox_started");
    if (started && Array.isArray(started.data.tools)) {
      this.tools = started.data.tools as unknown as RecordedTool[];
    }
    // Every payload the record names must be there as recorded, served or not: a resume checks what a seal
    // would have checked.
    for (const e of this.events) {
      for (const sha of payloadsOf(e)) await this.#bytes(sha, `${e.type} (seq ${e.seq})`);
    }
  }

  async #call(step: ModelStep): Promise<RecordedCall> {
    const e = step.call;
    const what = `model call ${step.n} (seq ${e.seq})`;
    const request = e.payload ? await this.#json(e.payload, `the request of ${what}`) : null;
    const body = (request ?? {}) as { params?: Json; wire?: Json };
    const replySha = typeof e.data.response_payload === "string" ? e.data.response_payload : null;
    const tokensSha = typeof e.data.tokens_payload === "string" ? e.data.tokens_payload : null;
    return {
      n: step.n,
      event: e,
      params: body.params ?? null,
      wire: body.wire,
      reply: replySha ? await this.#json(replySha, `the answer of ${what}`) : null,
      streamed: e.data.streamed === true,
      // A stream's tokens come back with its finish part, which the answer holds; a call's, beside its answer.
      tokens: tokensSha && e.data.streamed !== true
        ? await this.#json(tokensSha, `the tokens of ${what}`)
        : null,
    };
  }

  async #tool(e: EvidenceEvent, step: number): Promise<void> {
    const by = String(e.data.executed_by);
    // Output tools, the provider's tools and calls the AI SDK refused are recorded by the loop itself again.
    if (by !== "sandbox" && !by.startsWith("mcp:")) return;
    const id = String(e.data.call_id);
    const what = `tool call ${id} of ${e.data.tool} (seq ${e.seq})`;
    const args = e.payload ? await this.#json(e.payload, `the arguments of ${what}`) : null;
    const sha = typeof e.data.result_payload === "string" ? e.data.result_payload : null;
    const resultText = sha ? await this.#text(sha, `the result of ${what}`) : null;
    // served parsed: checked as an answer is, before the loop is served anything
    if (sha && resultText !== null) this.#parsed(resultText, sha, `the result of ${what}`);
    const list = this.toolCalls.get(id) ?? [];
    list.push({ event: e, step, args, resultText });
    this.toolCalls.set(id, list);
  }

  readonly #cache = new Map<string, Uint8Array>();

  async #bytes(sha: string, what: string): Promise<Uint8Array> {
    const known = this.#cache.get(sha);
    if (known) return known;
    try {
      const bytes = await this.record.payload(sha);
      this.#cache.set(sha, bytes);
      return bytes;
    } catch (error) {
      throw new RunNotReplayable(
        `run "${this.runId}" lacks ${what}, payloads/${sha}: ${
          (error as Error).message
        }; its evidence cannot be served`,
        { cause: error },
      );
    }
  }

  async #text(sha: string, what: string): Promise<string> {
    return new TextDecoder().decode(await this.#bytes(sha, what));
  }

  async #json(sha: string, what: string): Promise<Json> {
    return this.#parsed(await this.#text(sha, what), sha, what);
  }

  #parsed(text: string, sha: string, what: string): Json {
    try {
      // weighed, and no deeper than the loop walks what it is served (an answer's text part nested 100,000 deep
      // ran it out of stack)
      return parseJson(text, { weighed: true }) as Json;
    } catch (error) {
      const why = error instanceof TooDeepJson || error instanceof TooHeavyJson
        ? `is not JSON a reader takes (${error.message.replace(/^it /, "")})`
        : "is not JSON";
      throw new RunNotReplayable(`run "${this.runId}": ${what} (payloads/${sha}) ${why}`, {
        cause: error,
      });
    }
  }
}

/** A run whose events and manifest are read once: every later read gives the same text. */
function snapshot(record: RunRecord): RunRecord {
  let events: Promise<string | null> | null = null;
  let manifest: Promise<string | null> | null = null;
  return {
    runId: record.runId,
    folder: record.folder,
    eventsText: () => events ??= record.eventsText(),
    manifestText: () => manifest ??= record.manifestText(),
    payloadNames: () => record.payloadNames(),
    payloadInfo: (sha256) => record.payloadInfo(sha256),
    payloadPack: () => record.payloadPack(),
    payload: (sha256) => record.payload(sha256),
  };
}

/** The events of an ended run that verifies, for a replay or a fork. */
async function verifiedEvents(record: RunRecord, catalog: Catalog | undefined): Promise<EvidenceEvent[]> {
  const check = await verifyRun(record, catalog ? { catalog } : {});
  const text = await record.eventsText().catch(() => null);
  const read = text === null ? null : readEventsText(text);
  const last = read?.events.at(-1)?.type;
  if (
    read && check.problems.some((p) => p.code === "manifest.missing") && last !== "run_completed" &&
    last !== "run_failed"
  ) {
    throw new RunNotReplayable(
      `run "${record.runId}" was cut before its end (no run_completed or run_failed): resume it, provr resume ${record.runId}`,
    );
  }
  if (!check.ok || read === null) {
    const first = check.problems[0];
    throw new RunNotReplayable(
      `run "${record.runId}" does not verify (${
        first?.message ?? "its events cannot be read"
      }): only evidence ` +
        `that verifies is served; see prove verify ${record.runId}`,
    );
  }
  return read.events;
}

/** The whole lines of a cut run, for a resume: unsealed, its writer gone, its chain holding to its last line. */
async function cutEvents(record: RunRecord): Promise<EvidenceEvent[]> {
  const id = record.runId;
  if (await record.manifestText().catch(() => null) !== null) {
    throw new RunNotReplayable(
      `run "${id}" is sealed, so it was not cut: replay it (provr replay ${id}) or fork it (provr run --from ${id} --at N)`,
    );
  }
  const text = await record.eventsText().catch(() => null);
  if (!text) {
    throw new RunNotReplayable(`run "${id}" has no events (evidence/events.jsonl): nothing to resume`);
  }
  const read = readEventsText(text);
  const created = read.events[0];
  const state = await runWriterState(record.folder, created?.data.writer);
  if (state !== "gone") {
    const w = created?.data.writer as { pid?: unknown; host?: unknown } | undefined;
    throw new RunNotReplayable(
      state === "alive"
        ? `run "${id}" is still being written (process ${w?.pid} on ${w?.host}): wait for it to end`
        : `run "${id}" has no writer lock, so nothing tells that its writer (process ${w?.pid} on ${w?.host}) is gone; ` +
          `it cannot be resumed safely`,
    );
  }
  // A last line cut part way is the append the kill stopped: left out, as nothing else can be.
  const broken = read.problems.find((p) => p.code !== "events.cut");
  if (broken) {
    throw new RunNotReplayable(
      `run "${id}"'s evidence does not hold (${broken.message}): it cannot be resumed`,
    );
  }
  return read.events;
}
