/**
 * `replayRun`: a recorded run runs again from its run file, where it was, and its pinned inputs, with every
 * model answer and every tool result served from its evidence: no provider is asked, no key is needed, no tool
 * runs, no sandbox or MCP server starts, and the run's telemetry approves nothing. The replay is a new run,
 * linked to the original (`replayed_from`, `parent_run`), sealed and verifiable on its own; it stops at the
 * first request the run did not record, and its difference from the original is compared step by step.
 * @module
 */
import type { RunRecord } from "../../provevi/evidence/record.ts";
import { RunFile } from "../run/run_file.ts";
import { Journal } from "./journal.ts";
import { ReplayPart } from "./replay_part.ts";
import { RunNotReplayable } from "./replay_errors.ts";
import { type ComparedOutcome, runCompared, type ServeOptions } from "./serve_run.ts";

/** Options of {@linkcode replayRun}. */
export interface ReplayRunOptions extends ServeOptions {
  /** The run file to run, in place of the one the run recorded having read (`run_created`'s `run_file`). */
  file?: string;
}

/**
 * Replays a recorded run.
 *
 * @param source The run to replay, as its store reads it.
 * @param options The store, the catalog, and the run file in place of the recorded one.
 * @returns The replay's outcome, and whether it is identical to the run, or its first divergence.
 * @throws RunNotReplayable, before any run folder is made, for a run whose evidence cannot be served (it does
 *   not verify, has not ended, lacks a payload, ran an agent program) or whose run file or tools folder is no
 *   longer where it was.
 * @example
 * ```ts
 * import { FileStore, replayRun, RunFile, runFile } from "@mahacata/prove";
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
 * const replay = await replayRun(source, { store });
 * assert.equal(replay.identical, true);
 * assert.deepEqual(replay.served, { model_calls: 1, tool_calls: 0, tools_ran: 0 });
 * ```
 */
export async function replayRun(source: RunRecord, options: ReplayRunOptions): Promise<ComparedOutcome> {
  const journal = await Journal.read(source, { purpose: "replay", catalog: options.catalog });
  const file = await runFileOf(journal, options.file);
  const part = new ReplayPart({ mode: "replay", journal });
  return await runCompared(file, { ...options, part, replay: true, source: journal.record });
}

/** The run file a replay runs: the one given, else the one the run read, where it was. */
async function runFileOf(journal: Journal, given: string | undefined): Promise<RunFile> {
  const recorded = (await journal.runFile()).path;
  const path = given ?? recorded;
  if (path === null) {
    throw new RunNotReplayable(
      `run "${journal.runId}" was run from a program, not a run file on disk: give the run file to replay (--file FILE)`,
    );
  }
  try {
    return await RunFile.load(path);
  } catch (error) {
    const gone = !(await Deno.stat(path).then(() => true, () => false));
    if (gone && given === undefined) {
      throw new RunNotReplayable(
        `the run file ${path} of run "${journal.runId}" is no longer where it was: give it (--file FILE)`,
        { cause: error },
      );
    }
    throw error;
  }
}
