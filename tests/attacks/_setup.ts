/**
 * The setup the attack files share, each written once: a sealed sample run in a file store of its own, a run of
 * a stand-in for Codex (a script in the place of the program) with the run file those attacks use, the smallest
 * run file of a scripted model, and a wait that gives up after a bound (a hang is the failure many of these
 * attacks look for).
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { Manifest } from "../../lib/provevi/evidence/manifest.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { RunFile } from "../../lib/provrun/run/run_file.ts";
import { runFile, type RunOptions, type RunOutcome } from "../../lib/provrun/runner/run.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../provevi/_sample_run.ts";

/** A sealed run in a file store: its folder `<dir>/runs/<SAMPLE_RUN_ID>`, and the store (open, unless closed). */
export interface SampleRun {
  /** The new folder that holds the runs root, and room for the attack's own files; the caller removes it. */
  dir: string;
  /** The run's folder. */
  folder: string;
  /** The store, closed unless `open` was asked for. */
  store: FileStore;
  /** The run's manifest as the seal wrote it. */
  manifest: Manifest;
}

/**
 * Writes the sample run (`tests/provevi/_sample_run.ts`, sealed as provr seals one: format 2, its payloads
 * packed) into a file store in a new folder.
 *
 * @param prefix The new folder's name prefix (it names the attack in a listing of the temporary folder).
 * @param options `open`: leave the store open for the attack to use (it then closes it).
 * @returns The folder, the run's folder, the store and the manifest.
 */
export async function sampleRun(prefix: string, options: { open?: boolean } = {}): Promise<SampleRun> {
  const dir = await Deno.makeTempDir({ prefix });
  const store = new FileStore({ runs: join(dir, "runs") });
  const manifest = await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
  if (!options.open) await store.close();
  return { dir, folder: join(dir, "runs", SAMPLE_RUN_ID), store, manifest };
}

/** What a run of a stand-in changes of the run file {@linkcode standInRun} writes, and where the run goes. */
export interface StandInOptions {
  /** The runs root. */
  runs: string;
  /** The catalog, for a run with inputs. */
  catalog?: RunOptions["catalog"];
  /** `agent.limits.seconds`: 60 unless given. */
  seconds?: number;
  /** The prompt: `List the outputs.` unless given. */
  prompt?: string;
  /** More lines of the agent's section, each a YAML line without its indent (`allow_unsandboxed: [Bash]`). */
  agent?: string[];
  /** The run's inputs, each a YAML flow mapping (`{ uri: "data://…", as: revenue.csv }`). */
  inputs?: string[];
  /** Variables the run reads besides the stand-in's key (`PROVE_SERVE`); the rest come from this process. */
  env?: Record<string, string>;
}

/**
 * Runs `program` as provr runs Codex, with this run file (what `options` changes aside) and the key
 * `FAKE_OPENAI_KEY=sk-fake`; the provider's URL answers nothing, as none of these stand-ins calls it:
 *
 * ```yaml
 * run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
 * agent:
 *   name: analyst
 *   backend: codex
 *   program: <program>
 *   model: openai:gpt-fake
 *   provider: { base_url: "http://127.0.0.1:9/v1", api_key_env: FAKE_OPENAI_KEY }
 *   limits: { seconds: 60 }
 * prompt: List the outputs.
 * ```
 *
 * @param program The stand-in: an executable script.
 * @param options Where the run goes, and what of the run file differs.
 * @returns The run's outcome.
 */
export function standInRun(program: string, options: StandInOptions): Promise<RunOutcome> {
  const lines = [
    "run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }",
    "agent:",
    "  name: analyst",
    "  backend: codex",
    `  program: ${JSON.stringify(program)}`,
    "  model: openai:gpt-fake",
    '  provider: { base_url: "http://127.0.0.1:9/v1", api_key_env: FAKE_OPENAI_KEY }',
    ...(options.agent ?? []).map((line) => `  ${line}`),
    `  limits: { seconds: ${options.seconds ?? 60} }`,
    ...(options.inputs?.length ? ["inputs:", ...options.inputs.map((input) => `  - ${input}`)] : []),
    `prompt: ${options.prompt ?? "List the outputs."}`,
  ];
  const env: Record<string, string> = { FAKE_OPENAI_KEY: "sk-fake", ...options.env };
  return runFile(RunFile.parse(lines.join("\n") + "\n"), {
    runs: options.runs,
    ...(options.catalog ? { catalog: options.catalog } : {}),
    env: (name) => Object.hasOwn(env, name) ? env[name] : Deno.env.get(name),
  });
}

/**
 * The text of the smallest run file: a scripted model (`test:`) that answers "forty-two", and nothing else, as
 * the attacks on what a run is given use it (they change its text, or run it in a store that fails):
 *
 * ```yaml
 * run: { org: acme, domain: demo, env: dev, actor: ada }
 * agent:
 *   name: q
 *   backend: call
 *   model: "test:"
 *   script: { turns: [{ text: "forty-two" }] }
 * prompt: What is the answer?
 * ```
 *
 * @param options `mode`: the run's `mode` (strict, lenient), none unless given; `toolsFolder`: an agent-backend
 *   run with this tools folder, instead of a call.
 * @returns The run file's text.
 */
export function answerRunText(options: { mode?: string; toolsFolder?: string } = {}): string {
  return [
    `run: { org: acme, domain: demo, env: dev, actor: ada${options.mode ? `, mode: ${options.mode}` : ""} }`,
    "agent:",
    "  name: q",
    `  backend: ${options.toolsFolder === undefined ? "call" : "agent"}`,
    '  model: "test:"',
    ...(options.toolsFolder === undefined ? [] : [`  tools_folder: ${options.toolsFolder}`]),
    '  script: { turns: [{ text: "forty-two" }] }',
    "prompt: What is the answer?",
    "",
  ].join("\n");
}

/**
 * `work`'s result, or `"timeout"` when it has not settled within `ms`: for an attack whose failure is a wait
 * for ever (the timer is cleared as soon as `work` settles, so it holds no test open). What `work` started goes
 * on: the caller stops it (kills its child) when it sees `"timeout"`.
 *
 * @param work What is waited for.
 * @param ms The bound, generous: a loaded machine must not reach it.
 * @returns What `work` gave, or `"timeout"`.
 */
export async function beforeTimeout<T>(work: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => timer = setTimeout(() => resolve("timeout"), ms));
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs a module of this folder in a process of its own (`deno run -A --no-prompt`, with these flags and
 * arguments) and gives what it printed last: one line of JSON. A memory measure is taken there: `deno test
 * --parallel` runs the test files in workers of one process, whose RSS counts what every other file holds at
 * that moment.
 *
 * @param file The module's file name, in tests/attacks/.
 * @param flags Flags of `deno run` besides `-A --no-prompt`.
 * @param args The module's arguments.
 * @returns The last line of its standard output, parsed.
 */
async function jsonOfChild(file: string, flags: string[], args: string[]): Promise<unknown> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-prompt", ...flags, fileURLToPath(new URL(file, import.meta.url)), ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(output.stdout).trim().split("\n").at(-1) ?? "";
  assert.ok(
    output.success && out.startsWith("{"),
    `the child printed ${out}\n${new TextDecoder().decode(output.stderr)}`,
  );
  return JSON.parse(out);
}

/**
 * Runs a child of the attacks (in this folder) with V8's `gc()`, which measures what each of its cases holds
 * after a collection and prints them as one JSON object: the bytes held, by case.
 *
 * @param child The child's file name, in tests/attacks/.
 * @returns The bytes each case held.
 */
export async function heldInChild(child: string): Promise<Record<string, number>> {
  return await jsonOfChild(child, ["--v8-flags=--expose-gc"], []) as Record<string, number>;
}

/** What a work run by {@linkcode measuredInChild} cost its process, and what it gave. */
export interface Measured<T> {
  /** The growth of the process's RSS while the work ran: its peak, sampled every 2 ms, less its RSS before. */
  grew: number;
  /** The work's time, in milliseconds. */
  ms: number;
  /** What the work gave, through JSON. */
  got: T;
}

/**
 * Runs a work in a process of its own (`_measured_child.ts`), which measures the growth of its own RSS around
 * it: the export `name` of the module `work` (in tests/attacks/, a `_*_work.ts`), called with `args`. A work
 * that must make live things first (a store opened, a daemon and a run's writer) returns the measured part as a
 * function instead, which the child then calls, measured. What the work gives goes through JSON.
 *
 * @param work The work's module, in tests/attacks/.
 * @param name The export to call.
 * @param args Its arguments, each JSON.
 * @returns The growth, the time, and what the work gave.
 */
export async function measuredInChild<T>(
  work: string,
  name: string,
  ...args: unknown[]
): Promise<Measured<T>> {
  return await jsonOfChild("./_measured_child.ts", [], [work, name, JSON.stringify(args)]) as Measured<T>;
}
