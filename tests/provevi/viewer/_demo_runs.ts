/**
 * Real runs for the viewer's browser tests and screenshots, each made by provrun as a user makes it: an agent
 * that calls tools (one fails, one is refused by the sandbox), a run that fails, a run with a committed bundle
 * (the tour's, which a viewer without the catalog cannot check), a tampered run, and a Claude Code run (the real
 * program against a local fake provider, given its path).
 * @module
 */
import { join } from "node:path";
import { cp } from "node:fs/promises";
import type { EvidenceStore } from "../../../lib/provevi/store/store.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { FAKE_ANSWER, startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { gitCatalog } from "../../provrun/_catalog.ts";

const CSV = "quarter,revenue,region\nQ2,43.0,north\nQ3,48.2,north\n";

/** A catalog over a git repository of the demo's data, and its runs root. */
export type DemoCatalog = Awaited<ReturnType<typeof gitCatalog>>;

/** Makes the demo's catalog: a git repository holding `finance/revenue.csv`. */
export function demoCatalog(): Promise<DemoCatalog> {
  return gitCatalog({ "finance/revenue.csv": CSV });
}

const AGENT_TURNS = `
      - tool_calls: [{ id: c1, name: read_file, args: { path: /input/revenue-2025.csv } }]
        usage: { input: 412, output: 31 }
      - tool_calls: [{ id: c2, name: read_file, args: { path: /input/revenue.csv } }]
        usage: { input: 498, output: 29 }
      - tool_calls: [{ id: c3, name: write_file, args: { path: /output/answer.txt, content: "Revenue grew 12% in Q3 (48.2 vs 43.0 million USD)." } }]
        usage: { input: 601, output: 58 }
      - text: "Revenue grew 12% in Q3, from 43.0 to 48.2 million USD, all of it in the north region."
        usage: { input: 688, output: 27, cache_read: 380 }`;

/** The run file of the demo's agent: it reads a file that is not there, then the right one, and writes. */
export function agentRunFile(options: { name?: string; turns?: string; prompt?: string } = {}): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: finance, env: dev, actor: ada, mode: lenient }
agent:
  name: ${options.name ?? "revenue-analyst"}
  backend: agent
  model: "test:"
  instructions: You are a careful financial analyst. Read the files you are given and answer with numbers.
  script:
    model: claude-sonnet-4-5
    turns:
${options.turns ?? AGENT_TURNS}
prompt: ${options.prompt ?? "What was the revenue growth in Q3? Write the answer to /output/answer.txt."}
inputs:
  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }
outputs: [answer.txt]
`);
}

/** The run file of a run that fails: its model answers 503 to every request. */
export function failingRunFile(): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: finance, env: dev, actor: ada }
agent:
  name: revenue-question
  backend: call
  model: "test:"
  script:
    model: claude-sonnet-4-5
    turns:
      - error: { status: 503, message: "the model is overloaded: try again in a minute" }
prompt: What was the revenue growth in Q3?
`);
}

/** Runs a run file into a catalog's runs root (or a store); gives its ID. */
export async function demoRun(
  t: DemoCatalog,
  file: RunFile,
  options: { store?: EvidenceStore } = {},
): Promise<string> {
  const outcome = await runFile(file, {
    catalog: t.catalog,
    ...(options.store ? { store: options.store } : { runs: t.runs }),
    environ: {},
  });
  return outcome.runId;
}

/** Copies the tampered fixture run into a runs root; gives its ID. */
export async function tamperedRun(runs: string): Promise<string> {
  const id = "run-20261129T120000Z-0badc0de";
  const from = new URL(`../../../fixtures/runs-tampered/${id}`, import.meta.url).pathname;
  await cp(from, join(runs, id), { recursive: true });
  return id;
}

/**
 * A real Claude Code run against a local fake Anthropic provider: it reads its input, tries a file outside
 * its grants (refused by provrun), and writes its answer.
 */
export async function claudeRun(t: DemoCatalog, claude: string): Promise<string> {
  await using provider = startFakeAgentProvider([
    { name: "Read", input: { file_path: "{cwd}/input/revenue.csv" } },
    { name: "Read", input: { file_path: "/etc/hostname" } },
    { name: "Write", input: { file_path: "{cwd}/output/answer.md", content: FAKE_ANSWER + "\n" } },
  ]);
  const outcome = await runFile(
    RunFile.parse(`
run: { org: acme, domain: finance, env: dev, actor: ada, mode: strict }
agent:
  name: claude-analyst
  backend: claude-code
  program: ${JSON.stringify(claude)}
  model: anthropic:claude-sonnet-4-5
  provider: { base_url: ${JSON.stringify(provider.url)}, api_key_env: FAKE_ANTHROPIC_KEY }
  limits: { seconds: 120 }
prompt: What was the revenue growth in Q3? Write it to output/answer.md.
inputs:
  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }
outputs: [answer.md]
`),
    {
      catalog: t.catalog,
      runs: t.runs,
      env: (n) => (n === "FAKE_ANTHROPIC_KEY" ? "sk-fake" : Deno.env.get(n)),
    },
  );
  if (outcome.status !== "completed") throw new Error(`the Claude Code run ${outcome.status}`);
  return outcome.runId;
}

/** A second version of the demo's agent: other instructions, and it reads the right file first. */
export function agentV2RunFile(): RunFile {
  const file = agentRunFile({
    turns: `
      - tool_calls: [{ id: c1, name: read_file, args: { path: /input/revenue.csv } }]
        usage: { input: 455, output: 22 }
      - tool_calls: [{ id: c2, name: write_file, args: { path: /output/answer.txt, content: "Revenue grew 12.1% in Q3." } }]
        usage: { input: 540, output: 41 }
      - text: "Revenue grew 12.1% in Q3 (43.0 to 48.2 million USD)."
        usage: { input: 610, output: 19 }`,
  });
  return RunFile.parse(
    file.text.replace(
      "You are a careful financial analyst.",
      "You are a terse financial analyst; cite the file.",
    ),
  );
}
