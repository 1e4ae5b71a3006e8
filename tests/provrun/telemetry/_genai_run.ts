/**
 * An agent run whose spans the GenAI tests read: the agent backend with two tools, a model over HTTP (a fake
 * OpenAI-compatible server that calls `read_file`, then `list_files`, then answers), every request setting a
 * run file may set, a session, an OTLP destination at the level asked for.
 * @module
 */
import { join } from "node:path";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import type { RunOutcome } from "../../../lib/provrun/runner/run.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { gitCatalog } from "../_catalog.ts";
import { startFakeToolsServer } from "../../../fixtures/providers/fake_openai_tools_server.ts";

/** The quarterly figures the agent reads. */
export const CSV = "quarter,revenue\nQ2,43.0\nQ3,48.2\n";

/** What one run of the agent gives. */
export interface GenaiRun {
  outcome: RunOutcome;
  events: EvidenceEvent[];
  /** The token counts the model server sent, in total. */
  tokens: { input: number; output: number };
  /** The spans the store's index kept (`<run folder>/spans.jsonl`), as its text. */
  index: string;
}

/** The run file: `staged` false leaves the input out, so that `read_file` fails. */
export function genaiFile(options: { baseUrl: string; stream: boolean; staged: boolean }): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict, session_id: "conv-42" }
agent:
  name: analyst
  backend: agent
  model: "openai-compatible:gpt-4o-mini"
  provider: { base_url: "${options.baseUrl}" }
  instructions: Answer from the files under /input.
  stream: ${options.stream}
  tools: [read_file, list_files]
  settings:
    temperature: 0
    max_tokens: 512
    top_p: 1
    seed: 7
    frequency_penalty: 0
    presence_penalty: 0
    stop_sequences: ["END"]
prompt: What was the revenue growth in Q3?
${options.staged ? 'inputs:\n  - { uri: "data://acme/demo/dev/finance/q3.csv", as: q3.csv }' : ""}
outputs: [answer.txt]
`);
}

/** A policy whose one OTLP destination, at `level`, is `url`. */
export function otlpPolicy(url: string, level: "names" | "usage" | "bodies"): TelemetryPolicy {
  return TelemetryPolicy.fromDict({
    version: 1,
    libraries: {},
    destinations: { collector: { kind: "otlp", receives: level, endpoint: url } },
    hosts: ["127.0.0.1"],
  });
}

/**
 * Runs the agent once, its spans sent to `url` at `level` with the OTLP variables of `environ`.
 */
export async function genaiRun(
  options: {
    url: string;
    level: "names" | "usage" | "bodies";
    stream: boolean;
    staged?: boolean;
    environ?: Record<string, string>;
    /** The file the agent reads; {@linkcode CSV} by default. */
    csv?: string;
  },
): Promise<GenaiRun> {
  await using server = startFakeToolsServer();
  await using t = await gitCatalog({ "finance/q3.csv": options.csv ?? CSV });
  const file = genaiFile({ baseUrl: server.baseUrl, stream: options.stream, staged: options.staged ?? true });
  const outcome = await runFile(file, {
    catalog: t.catalog,
    runs: t.runs,
    policy: otlpPolicy(options.url, options.level),
    environ: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: options.url, ...options.environ },
  });
  const record = await new FileStore({ runs: t.runs }).readRun(outcome.runId);
  const events = readEventsText((await record.eventsText())!).events;
  const tokens = {
    input: server.usages.reduce((n, u) => n + u.prompt, 0),
    output: server.usages.reduce((n, u) => n + u.completion, 0),
  };
  const index = await Deno.readTextFile(join(outcome.folder, "spans.jsonl")).catch(() => "");
  return { outcome, events, tokens, index };
}
