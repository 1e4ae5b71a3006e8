/**
 * The part of a run that serves another run's evidence (see {@linkcode RunPart}): its model answers the first
 * calls from the record ({@linkcode ServedModel}), its tool hook answers their tool calls
 * ({@linkcode ServedTools}), `run_created` records the relation (`replayed_from`, `forked_from` and `at`, or
 * `resumed_from`, and `parent_run`), and the run's `output/` starts as the source's where no tool runs again:
 * a replay's is a copy of the recorded outputs, a resume's a copy of what the cut run had written.
 * @module
 */
import { basename, join } from "node:path";
import type { Json } from "../../provevi/evidence/event.ts";
import { sha256Hex } from "../../provevi/evidence/hash.ts";
import { readCapped } from "../../provevi/evidence/open_file.ts";
import { openTree, type TreeEntry } from "../../provevi/evidence/open_tree.ts";
import { DEFAULT_OUTPUT_BYTES, DEFAULT_OUTPUTS_BYTES } from "../run/outputter.ts";
import { isOutputPath } from "../../provevi/evidence/event_rules.ts";
import { modelOf } from "../backends/models.ts";
import type { AgentSpec } from "../run/run_file.ts";
import type { BackendSetup, PartRun, RunPart, ToolCall, ToolReturn } from "../run/run_part.ts";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { Journal } from "./journal.ts";
import { type ReplayDiverged, ResumeStopped, RunNotReplayable } from "./replay_errors.ts";
import { ServedModel } from "./served_model.ts";
import { ServedTools } from "./served_tools.ts";

/** What a {@linkcode ReplayPart} serves. */
export interface ReplayPartOptions {
  /** A replay serves every step and runs nothing; a fork serves the steps before `at`; a resume, all recorded. */
  mode: "replay" | "fork" | "resume";
  /** The source run's evidence. */
  journal: Journal;
  /** A fork's first live step, from 1. */
  at?: number;
  /** More facts for `run_created` (what a fork changed). */
  facts?: { [key: string]: Json };
  /** Reads the variables the live model reads (its key). */
  env?: (name: string) => string | undefined;
}

/** A run's part that serves a source run's evidence. */
export class ReplayPart implements RunPart {
  readonly name = "replay";
  /** A replay serves every answer, so no provider's key is asked for. */
  readonly servesAll: boolean;
  /** The first divergence, or the stop of a resume, when there was one. */
  stopped: ReplayDiverged | ResumeStopped | null = null;
  readonly #options: ReplayPartOptions;
  #run: PartRun | null = null;
  #model: ServedModel | null = null;
  readonly #tools: ServedTools;

  /** @param options What to serve, and how. */
  constructor(options: ReplayPartOptions) {
    this.#options = options;
    this.servesAll = options.mode === "replay";
    const { journal } = options;
    const served = options.mode === "fork" ? (options.at ?? 1) - 1 : journal.calls.length;
    const recordedTools = new Map((journal.tools ?? []).map((t) => [t.name, t]));
    this.#tools = new ServedTools(journal, {
      mode: options.mode,
      step: () => this.#model?.calls ?? 0,
      served,
      idempotent: (tool) => recordedTools.get(tool)?.idempotent === true,
      onDiverged: (error) => this.#stop(error),
    });
  }

  /** How many model calls and tool calls were served from the source, and how many ran. */
  get counts(): { model_calls: number; tool_calls: number; tools_ran: number } {
    return {
      model_calls: this.#model?.servedCount ?? 0,
      tool_calls: this.#tools.counts.served,
      tools_ran: this.#tools.counts.ran,
    };
  }

  /** The relation to the source, in `run_created`. */
  facts(): { [key: string]: Json } {
    const source = this.#options.journal.runId;
    const relation: { [key: string]: Json } = this.#options.mode === "replay"
      ? { replayed_from: source }
      : this.#options.mode === "fork"
      ? { forked_from: source, at: this.#options.at ?? 1 }
      : { resumed_from: source };
    return { ...relation, ...this.#options.facts, parent_run: source };
  }

  /** Keeps the run, to stop it at a divergence. */
  beforeStart(run: PartRun): void {
    this.#run = run;
  }

  /** The run's `output/` as the source had it where tools do not run again. */
  async afterCreated(run: PartRun): Promise<void> {
    const { mode, journal } = this.#options;
    const from = journal.record.folder;
    if (from === null || mode === "fork") return;
    const to = join(run.ctx.folder, "output");
    if (mode === "resume") {
      // no more than the run's own limits let its outputs be (twice all of them, as the run's end reads them)
      const limits = run.file.data.agent.limits;
      const one = limits?.output_bytes ?? DEFAULT_OUTPUT_BYTES;
      const left = 2 * Math.max(limits?.outputs_bytes ?? DEFAULT_OUTPUTS_BYTES, one);
      return await copyTree(join(from, "output"), to, { one, left });
    }
    for (const e of journal.events) {
      if (e.type !== "output_artifact_created" || !isOutputPath(e.data.path)) continue;
      const path = e.data.path as string;
      const source = join(from, "output", path);
      // the bytes hashed are the bytes copied, of a file opened in one step (no link followed, no FIFO waited on),
      // and no more of them than the run recorded: a sparse file of gigabytes put there since was read whole
      const recorded = typeof e.data.size === "number" && e.data.size >= 0 ? e.data.size : Infinity;
      const bytes = await readCapped(source, recorded).catch(() => null);
      if (bytes === null || sha256Hex(bytes) !== e.data.sha256) {
        throw new RunNotReplayable(`run "${journal.runId}"'s output/${path} is not what it recorded`);
      }
      await Deno.mkdir(join(to, path, ".."), { recursive: true });
      await Deno.writeFile(join(to, path), bytes, { createNew: true });
    }
  }

  /** A replay offers the tools as recorded, and starts no sandbox and no MCP server. */
  prepareBackend(setup: BackendSetup): Promise<BackendSetup> {
    if (this.#options.mode !== "replay" || setup.agent.backend !== "agent") return Promise.resolve(setup);
    return Promise.resolve({ ...setup, servedTools: this.#options.journal.tools ?? [] });
  }

  /** The served model: the recorded answers, then (a fork, a resume) the run's own model. */
  async modelFor(agent: AgentSpec, run: PartRun): Promise<LanguageModelV4> {
    const { mode, journal, at } = this.#options;
    const live = mode === "replay" ? null : await modelOf(agent, {
      folder: run.file.folder,
      ...(this.#options.env ? { env: this.#options.env } : {}),
      ...(agent.limits?.model_bytes ? { responseBytes: agent.limits.model_bytes } : {}),
    });
    this.#model = new ServedModel(journal, {
      live,
      ...(mode === "fork" ? { served: (at ?? 1) - 1 } : {}),
      compare: mode !== "fork",
      onDiverged: (error) => this.#stop(error),
    });
    return this.#model;
  }

  /** Serves a tool call, or runs it. */
  async wrapTool(call: ToolCall, run: () => Promise<ToolReturn>): Promise<ToolReturn> {
    try {
      return await this.#tools.wrap(call, run);
    } catch (error) {
      if (error instanceof ResumeStopped) this.#stop(error);
      throw error;
    }
  }

  #stop(error: ReplayDiverged | ResumeStopped): void {
    this.stopped ??= error;
    this.#run?.abort(error);
  }
}

/**
 * Copies a folder's plain files, leaving out links and anything that is not a file or a folder, and a file past
 * the run's limit of one output or past what is left of its budget (the resumed run would fail for it, and a
 * sparse file can claim any size: one of 1.5 GiB was read whole into provr's memory). The walk (`open_tree.ts`)
 * enters each folder and checks it is the one listed (a subfolder swapped for a link to a folder of the user's is
 * refused, not followed) and opens each file once by its name there (a link or a FIFO swapped in after the listing
 * is refused, not followed or waited on); each file is streamed from what was opened.
 */
async function copyTree(from: string, to: string, budget: { one: number; left: number }): Promise<void> {
  const take = (e: TreeEntry) =>
    // A link is never followed; a write_file cut before its rename left a temp file, which is no output.
    (e.look.isDirectory || e.look.isFile) && !/^\..+\.[0-9a-f-]{36}\.tmp$/.test(basename(e.abs)) &&
    !(e.look.isFile && e.look.nlink !== null && e.look.nlink > 1); // a hard link may lead anywhere
  try {
    for await (const item of openTree(from, { take })) {
      const target = item.rel === "" ? to : join(to, ...item.rel.split("/"));
      if (item.kind === "folder") {
        await Deno.mkdir(target, { recursive: true });
        continue;
      }
      const { size, nlink } = item.info;
      if (nlink > 1 || size > budget.one || size > budget.left) continue;
      budget.left -= size;
      await Deno.writeFile(target, item.file.readable, { createNew: true });
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound && !(await Deno.lstat(from).then(() => true, () => false))) {
      return;
    }
    throw error;
  }
}
