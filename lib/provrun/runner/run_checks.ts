/**
 * Steps 6 and 7 of a run: each staged input hashed again (`input_verified`) and each output recorded
 * (`output_artifact_created`). They run for a failed run too, once each, so that the record of a failed run
 * still verifies and shows what the run left.
 * @module
 */
import { ProveviError } from "../../provevi/evidence/errors.ts";
import type { EvidenceMode, EvidenceRecorder } from "../run/recorder.ts";
import { InputChanged, LinkFound, OutputMissing, OutputTooLarge } from "../run/errors.ts";
import {
  collectOutputs,
  DEFAULT_OUTPUT_BYTES,
  DEFAULT_OUTPUTS_BYTES,
  findLinks,
  linkProblem,
  outputSizeProblem,
} from "../run/outputter.ts";
import type { InProcessStager, InputCheck } from "../run/stager.ts";
import type { RunFileData } from "../run/run_file.ts";

/** What the checks of one run need. */
export interface RunChecksOptions {
  recorder: EvidenceRecorder;
  /** The run folder. */
  folder: string;
  /** The run's URI, which names its outputs. */
  uri: string;
  /** The run's mode: a missing output fails a strict run and is noted in a lenient one. */
  mode: EvidenceMode;
  /** The run file's data. */
  spec: RunFileData;
}

/** The checks at the end of one run, each made once. */
export class RunChecks {
  readonly #options: RunChecksOptions;
  #inputsVerified = false;
  #outputsRecorded = false;
  /** The stager, once the inputs are staged; until then there is nothing to check again. */
  stager: InProcessStager | null = null;

  /** @param options The recorder, the folder, the run's URI, mode and run file. */
  constructor(options: RunChecksOptions) {
    this.#options = options;
  }

  /** The end of a run that worked: the inputs must be as staged, and the outputs as declared. */
  async completed(): Promise<void> {
    const changed = (await this.verifyInputs()).filter((c) => !c.ok).map((c) => c.name);
    if (changed.length) throw new InputChanged(changed);
    await this.recordOutputs(true);
  }

  /** The end of a run that failed: what it staged and what it wrote are recorded, and nothing more fails it. */
  async failed(): Promise<void> {
    await this.verifyInputs().catch(() => {});
    await this.recordOutputs(false).catch(() => {});
  }

  /** Hashes each staged input again, once, writing `input_verified` for each. */
  async verifyInputs(): Promise<InputCheck[]> {
    if (this.#inputsVerified || this.stager === null) return [];
    this.#inputsVerified = true;
    const checks = await this.stager.verify();
    for (const check of checks) {
      await this.#options.recorder.record({
        type: "input_verified",
        component: "InProcessStager",
        refs: [check.pinned],
        data: { name: check.name, sha256: check.sha256, expected: check.expected, ok: check.ok },
      });
    }
    return checks;
  }

  /**
   * Records each output, once; then fails the run for links planted in `input/` or `output/`, outputs past
   * their limits, and (when the run `ended`) a declared output it did not write, in strict mode.
   */
  async recordOutputs(ended: boolean): Promise<void> {
    if (this.#outputsRecorded) return;
    this.#outputsRecorded = true;
    const { recorder, folder, uri, spec } = this.#options;
    const limits = {
      one: spec.agent.limits?.output_bytes ?? DEFAULT_OUTPUT_BYTES,
      total: spec.agent.limits?.outputs_bytes ?? DEFAULT_OUTPUTS_BYTES,
    };
    // Outputs past their limits are still recorded (the run fails naming them), up to twice the limit of all of
    // them read: past that, a file is named by its size and not read (a sparse file can claim any size).
    const { outputs, unread, special } = await collectOutputs(folder, 2 * Math.max(limits.total, limits.one));
    for (const out of outputs) {
      await recorder.record({
        type: "output_artifact_created",
        component: "Outputter",
        refs: [`${uri}/output/${out.path}`],
        data: { path: out.path, sha256: out.sha256, size: out.size },
      });
    }
    const links = [...await findLinks(folder, "input"), ...await findLinks(folder, "output")];
    if (links.length) throw new LinkFound(linkProblem(links));
    if (special.length) {
      throw new ProveviError(
        `${special.join(", ")}; a run's outputs are plain files, so anything else there fails the run`,
      );
    }
    // the files not read are past a limit by their size, which the message names
    const tooLarge = outputSizeProblem([...outputs, ...unread.map((u) => ({ ...u, sha256: "" }))], limits);
    if (tooLarge) throw new OutputTooLarge(tooLarge);
    if (ended) await this.#declared(new Set(outputs.map((o) => o.path)));
  }

  /** A declared output the run did not write is never passed over: lenient mode notes it, strict mode fails. */
  async #declared(written: Set<string>): Promise<void> {
    const missing = (this.#options.spec.outputs ?? []).filter((name) => !written.has(name));
    if (!missing.length) return;
    const what = `the run did not write its declared output${missing.length > 1 ? "s" : ""} ${
      missing.map((m) => `output/${m}`).join(", ")
    }`;
    if (this.#options.mode === "strict") throw new OutputMissing(what);
    await this.#options.recorder.record({
      type: "note_added",
      component: "Outputter",
      data: { missing_outputs: missing },
    });
  }
}
