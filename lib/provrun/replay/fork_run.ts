/**
 * `forkRun`: a new run that takes the first steps of a recorded run from its evidence and runs the rest live,
 * with a change: another model, another prompt, or any key of the run file set to another value. The steps
 * before `at` are served (their model answers and tool results, without comparing the requests: a fork is
 * meant to differ); step `at` and after run with the change. The fork records where it came from
 * (`forked_from`, `at`, `parent_run`) and what it changed (`fork_changes`), and verifies on its own.
 * @module
 */
import { parse, stringify } from "yaml";
import type { Json } from "../../provevi/evidence/event.ts";
import { sha256Hex } from "../../provevi/evidence/hash.ts";
import type { RunRecord } from "../../provevi/evidence/record.ts";
import { RunFile } from "../run/run_file.ts";
import { Journal } from "./journal.ts";
import { ReplayPart } from "./replay_part.ts";
import { RunNotReplayable } from "./replay_errors.ts";
import { type ComparedOutcome, runCompared, type ServeOptions } from "./serve_run.ts";

/** What a fork changes in the run file it takes from its source. */
export interface ForkChange {
  /** The model route from step `at` on (`agent.model`); a scripted model's `agent.script` goes with the old one. */
  model?: string;
  /** The prompt (`prompt`), as text. */
  prompt?: string;
  /** Keys of the run file by their dotted path (`agent.settings.temperature`), each a YAML value as text. */
  set?: Record<string, string>;
}

/** Options of {@linkcode forkRun}. */
export interface ForkOptions extends ServeOptions, ForkChange {
  /** The first step that runs live, from 1: the steps before it are served. */
  at: number;
}

/**
 * Forks a recorded run at a step.
 *
 * @param source The run to fork, as its store reads it.
 * @param options The step, the change, the store.
 * @returns The fork's outcome and its difference from the source.
 * @throws RunNotReplayable for a source whose evidence cannot be served, or a step it does not have;
 *   RunFileError for a change that makes the run file wrong.
 * @example
 * ```ts
 * import { FileStore, forkRun, RunFile, runFile } from "@mahacata/prove";
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
 * const fork = await forkRun(source, { store, at: 1, prompt: "Say goodbye." });
 * assert.equal(fork.run.status, "completed");
 * assert.equal(fork.divergence?.what, "prompt");
 * ```
 */
export async function forkRun(source: RunRecord, options: ForkOptions): Promise<ComparedOutcome> {
  const journal = await Journal.read(source, { purpose: "fork", catalog: options.catalog });
  const steps = journal.calls.length;
  if (!Number.isSafeInteger(options.at) || options.at < 1 || options.at > steps + 1) {
    throw new RunNotReplayable(
      `run "${source.runId}" has ${steps} model steps: fork it at a step from 1 to ${
        steps + 1
      }, not ${options.at}`,
    );
  }
  const recorded = await journal.runFile();
  const file = changed(recorded, options);
  const part = new ReplayPart({
    mode: "fork",
    journal,
    at: options.at,
    facts: { fork_changes: changesOf(options) },
    ...(options.env ? { env: options.env } : {}),
  });
  return await runCompared(file, { ...options, part, replay: false, source: journal.record });
}

/** The source's run file with the change made, checked again; relative paths stay relative to where it was. */
function changed(recorded: { text: string; path: string | null }, change: ForkChange): RunFile {
  if (!change.model && change.prompt === undefined && !Object.keys(change.set ?? {}).length) {
    return RunFile.parse(recorded.text, recorded.path ? { path: recorded.path } : {});
  }
  const data = parse(recorded.text) as Record<string, unknown>;
  const set = (path: string, value: unknown) => {
    const keys = path.split(".");
    let at = data;
    for (const key of keys.slice(0, -1)) {
      const next = at[key] ?? {};
      if (typeof next !== "object" || next === null || Array.isArray(next)) {
        throw new RunNotReplayable(`--set ${path}: ${key} is not a mapping in the run file`);
      }
      at = at[key] = next as Record<string, unknown>;
    }
    at[keys.at(-1)!] = value;
  };
  if (change.model) {
    set("agent.model", change.model);
    // A scripted model's script belongs to the model it replaces (a --set may give the new one its own).
    delete (data.agent as Record<string, unknown>).script;
  }
  if (change.prompt !== undefined) set("prompt", change.prompt);
  for (const [path, text] of Object.entries(change.set ?? {})) {
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(path)) {
      throw new RunNotReplayable(
        `--set ${path}=…: a key is a dotted path of the run file, such as agent.model`,
      );
    }
    set(path, parse(text));
  }
  return RunFile.parse(stringify(data), recorded.path ? { path: recorded.path } : {});
}

/** What the fork changed, for `run_created`: the model, the prompt's hash, the keys set. */
function changesOf(change: ForkChange): { [key: string]: Json } {
  return {
    ...(change.model ? { model: change.model } : {}),
    ...(change.prompt !== undefined ? { prompt_sha256: sha256Hex(change.prompt) } : {}),
    ...(Object.keys(change.set ?? {}).length ? { set: { ...change.set } } : {}),
  };
}
