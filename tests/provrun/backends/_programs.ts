/**
 * The agent programs of the claude-code and codex tests: the real CLIs that .ci/peers/agents.sh installs, named
 * by PROVRUN_TEST_CLAUDE and PROVRUN_TEST_CODEX. In CI a missing program fails its test; elsewhere it is
 * skipped with a message naming the peer.
 * @module
 */
import { join } from "node:path";
import { FileStore, readEventsText } from "../../../lib/provevi/mod.ts";

const CI = Deno.env.get("CI") !== undefined;

/** The path of a program, and whether its tests are skipped (never in CI). */
export function program(variable: string, what: string): { path: string | undefined; ignore: boolean } {
  const path = Deno.env.get(variable);
  if (path === undefined && !CI) {
    console.warn(`${what} tests skipped: ${variable} is unset (source .ci/peers/agents.sh, as .ci/run does)`);
  }
  return { path, ignore: path === undefined && !CI };
}

/** Fails in CI when the program's variable is unset. */
export function needed(path: string | undefined, variable: string): string {
  if (path === undefined) throw new Error(`${variable} is unset: .ci/peers/agents.sh installs the program`);
  return path;
}

/** The events of a run of a file store. */
export async function eventsOf(runs: string, runId: string) {
  const record = await new FileStore({ runs }).readRun(runId);
  return readEventsText((await record.eventsText())!).events;
}

/** The span rows of a run folder. */
export async function spanRows(folder: string): Promise<{ trace_id: string; name: string }[]> {
  try {
    return (await Deno.readTextFile(join(folder, "spans.jsonl"))).trim().split("\n").filter(Boolean).map((
      l,
    ) => JSON.parse(l));
  } catch {
    return [];
  }
}
