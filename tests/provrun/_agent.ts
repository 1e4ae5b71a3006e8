/**
 * Helpers for the agent backend's tests: a run file with a scripted model, and the events and payloads of a
 * run.
 * @module
 */
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { RunFile } from "../../lib/provrun/run/run_file.ts";

/** An agent run file; `turns` is the script's YAML list, indented by six spaces; `extra` agent keys by two. */
export function agentFile(
  turns: string,
  options: { extra?: string; stream?: boolean; inputs?: string } = {},
): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict, session_id: "conv-42" }
agent:
  name: analyst
  backend: agent
  model: "test:"
  stream: ${options.stream ?? false}
${options.extra ?? ""}
  script:
    model: answer-1
    turns:
${turns}
prompt: What was the revenue growth in Q3?
${options.inputs ?? ""}
outputs: [answer.txt]
`);
}

/** The events of a run, and its record. */
export async function eventsOf(runs: string, runId: string) {
  const record = await new FileStore({ runs }).readRun(runId);
  return { record, events: readEventsText((await record.eventsText())!).events };
}

/** A payload, parsed as JSON. */
export async function payloadOf(runs: string, runId: string, sha: string): Promise<unknown> {
  const record = await new FileStore({ runs }).readRun(runId);
  return JSON.parse(new TextDecoder().decode(await record.payload(sha)));
}
