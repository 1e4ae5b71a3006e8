/**
 * `resumeRun`: a run cut by a crash (provr killed, a machine lost) goes on from its evidence. The cut run is
 * left as it is (unsealed; its writer is gone); a new run, linked to it (`resumed_from`, `parent_run`), runs
 * the same run file as recorded, with each model call and tool call that the cut run recorded served from its
 * evidence (the requests compared with the recorded ones), its `output/` as the cut run left it, and the first
 * call not recorded run live. A tool call that was requested and whose result was not recorded may have run:
 * it runs again only when its tool was declared idempotent; otherwise the resume stops before it starts.
 * @module
 */
import type { RunRecord } from "../../provevi/evidence/record.ts";
import { verifyRun } from "../../provevi/runs/verify_run.ts";
import type { RunCheck } from "../../provevi/runs/verify_run.ts";
import { RunFile } from "../run/run_file.ts";
import { Journal } from "./journal.ts";
import { ReplayPart } from "./replay_part.ts";
import { ResumeStopped } from "./replay_errors.ts";
import { runServed, type ServedOutcome, type ServeOptions } from "./serve_run.ts";

/** What a resume gives: also the check of the resumed run with the cut one, as one history. */
export interface ResumeOutcome extends ServedOutcome {
  /** `verifyRun` of the resumed run, which checks its served steps against the cut run's. */
  check: RunCheck | null;
}

/**
 * Resumes a cut run.
 *
 * @param source The cut run, as its store reads it.
 * @param options The store (where the resumed run goes too), the catalog, the live model's variables.
 * @returns The resumed run's outcome and its check.
 * @throws RunNotReplayable for a run that is sealed, still being written, or whose evidence does not hold;
 *   ResumeStopped for a requested call whose result was not recorded, of a tool not declared idempotent.
 * @example
 * ```ts
 * import { FileStore, resumeRun, RunFile, runFile, RunNotReplayable } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/run.yaml`, `
 * run: { org: acme, domain: demo, env: dev }
 * agent: { name: hello, backend: call, model: "test:", script: { model: echo-1, turns: [{ text: Hello. }] } }
 * prompt: Say hello.
 * `);
 * const { runId } = await runFile(await RunFile.load(`${dir}/run.yaml`), { runs: `${dir}/runs` });
 * await using store = new FileStore({ runs: `${dir}/runs` });
 * const source = await store.readRun(runId);
 * // A resume continues a run that was cut (killed before its seal); a sealed run is refused.
 * await assert.rejects(resumeRun(source, { store }), RunNotReplayable);
 * ```
 */
export async function resumeRun(source: RunRecord, options: ServeOptions): Promise<ResumeOutcome> {
  const journal = await Journal.read(source, { purpose: "resume" });
  checkPending(journal);
  const recorded = await journal.runFile();
  const file = RunFile.parse(recorded.text, recorded.path ? { path: recorded.path } : {});
  const part = new ReplayPart({ mode: "resume", journal, ...(options.env ? { env: options.env } : {}) });
  const run = await runServed(file, { ...options, part, replay: false });
  const check = run.manifest
    ? await verifyRun(await options.store.readRun(run.runId), {
      store: options.store,
      ...(options.catalog ? { catalog: options.catalog } : {}),
    })
    : null;
  return { run, source: source.runId, served: part.counts, check };
}

/** Refuses a resume that would run again a call which may have run and whose tool is not idempotent. */
function checkPending(journal: Journal): void {
  const tools = new Map((journal.tools ?? []).map((t) => [t.name, t]));
  for (const p of journal.pending()) {
    const tool = tools.get(p.tool);
    // An output tool runs nowhere, a provider's tool ran at the provider, an unknown name ran nothing.
    if (!tool || tool.kind === "output" || tool.idempotent === true) continue;
    throw new ResumeStopped(
      `cannot resume run "${journal.runId}": the call ${p.callId} of ${p.tool} (model step ${p.step}) was ` +
        `requested and its result not recorded, and ${p.tool} is not declared idempotent, so it may have run ` +
        `and is not run again; check what it did, then fork the run before that step (provr run --from ` +
        `${journal.runId} --at ${p.step})`,
    );
  }
}
