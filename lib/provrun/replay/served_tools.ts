/**
 * Tool calls answered from a run's evidence: inside each call's recorded step (`RunPart.wrapTool`), a call of a
 * served model step gets the result recorded for its call ID (or its recorded error), after its tool and
 * arguments are compared with the recorded ones; the tool does not run. A call of a live step runs. A call a
 * served step asked for and that the run did not record as done runs only when its tool is declared idempotent
 * (a resume), is a divergence in a replay, and runs in a fork.
 * @module
 */
import { jsonDifference, shownValue } from "../../provevi/diff/json_difference.ts";
import type { ToolCall, ToolReturn } from "../run/run_part.ts";
import type { Journal, RecordedToolCall } from "./journal.ts";
import { ReplayDiverged, ResumeStopped, type ServedDivergence } from "./replay_errors.ts";

/** How a run serves its tool calls. */
export interface ServedToolsOptions {
  /** `replay` runs no tool; `fork` runs the calls of its live steps; `resume`, those past the cut. */
  mode: "replay" | "fork" | "resume";
  /** The model step being answered now (the number of model calls made), from the served model. */
  step: () => number;
  /** How many model steps are served. */
  served: number;
  /** Whether a tool is declared idempotent, as the run recorded it. */
  idempotent: (tool: string) => boolean;
  /** Called at the first divergence, before the call throws it. */
  onDiverged?: (error: ReplayDiverged) => void;
}

/** The tool calls of one run served from another's evidence. */
export class ServedTools {
  readonly #journal: Journal;
  readonly #options: ServedToolsOptions;
  /** How many calls were served, and how many ran. */
  readonly counts = { served: 0, ran: 0 };

  /** @param journal The run's evidence. @param options How calls are served. */
  constructor(journal: Journal, options: ServedToolsOptions) {
    this.#journal = journal;
    this.#options = options;
  }

  /** Runs one call: its recorded result when its step is served, else the tool itself. */
  async wrap(call: ToolCall, run: () => Promise<ToolReturn>): Promise<ToolReturn> {
    const step = this.#options.step();
    if (step > this.#options.served) return await this.#ran(run);
    const recorded = this.#journal.takeToolCall(call.callId);
    if (!recorded) return await this.#unrecorded(call, { step, run });
    if (this.#options.mode !== "fork") this.#compare(call, recorded, step);
    // A fork's output/ must hold what its served steps wrote before its live steps read it: the built-in
    // write_file is run again (it writes what its arguments say, in the sandbox); its recorded result is served.
    if (
      this.#options.mode === "fork" && call.tool === "write_file" &&
      recorded.event.data.executed_by === "sandbox"
    ) {
      await run().catch(() => {});
    }
    this.counts.served += 1;
    const served = { run_id: this.#journal.runId, seq: recorded.event.seq };
    const console = typeof recorded.event.data.console === "string" ? recorded.event.data.console : "";
    if (recorded.resultText === null) {
      const error = new Error(String(recorded.event.data.message ?? ""));
      error.name = String(recorded.event.data.error);
      throw Object.assign(error, { console, served });
    }
    return { value: JSON.parse(recorded.resultText), console, served };
  }

  async #ran(run: () => Promise<ToolReturn>): Promise<ToolReturn> {
    this.counts.ran += 1;
    return await run();
  }

  /** A call of a served step that the run did not record as done. */
  #unrecorded(call: ToolCall, at: { step: number; run: () => Promise<ToolReturn> }): Promise<ToolReturn> {
    const { mode, idempotent } = this.#options;
    if (mode === "fork") return this.#ran(at.run);
    if (mode === "resume") {
      if (idempotent(call.tool)) return this.#ran(at.run);
      throw new ResumeStopped(
        `the call ${call.callId} of ${call.tool} (model step ${at.step}) was requested and its result not recorded, ` +
          `and ${call.tool} is not declared idempotent: it may have run, so it is not run again`,
      );
    }
    return this.#diverge({
      step: at.step,
      what: "tool_call",
      path: null,
      detail: `the replay calls ${call.tool} (${call.callId}), which the run did not record as done`,
    });
  }

  #compare(call: ToolCall, recorded: RecordedToolCall, step: number): void {
    const was = String(recorded.event.data.tool);
    if (was !== call.tool) {
      this.#diverge({
        step,
        what: "tool_call",
        path: null,
        detail: `the call ${call.callId} goes to ${call.tool}, and the run's went to ${was}`,
      });
    }
    const d = jsonDifference(recorded.args, call.args);
    if (d) {
      this.#diverge({
        step,
        what: "arguments",
        path: d.path,
        detail: `the arguments of ${call.tool} (${call.callId}) differ at ${d.path || "the top"}: ` +
          `${shownValue(d.a)} recorded, ${shownValue(d.b)} now`,
      });
    }
  }

  #diverge(divergence: ServedDivergence): never {
    const error = new ReplayDiverged(divergence);
    this.#options.onDiverged?.(error);
    throw error;
  }
}
