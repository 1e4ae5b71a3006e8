/**
 * A recorded agent run for the replay tests, in a folder of its own: a run file (a scripted model that reads the
 * input, asks a tools folder's tool, writes an output and answers), its tools folder, its `file:///` input, a
 * file store, and the run itself.
 * @module
 */
import { join } from "node:path";
import { Catalog } from "../../../lib/provcat/catalog.ts";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import type { RunRecord } from "../../../lib/provevi/evidence/record.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import type { RunOutcome } from "../../../lib/provrun/runner/run.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";

/** The tool of the tools folder: a rate by currency. */
export const RATES = `export const TOOLS = [{
  name: "rate",
  description: "The exchange rate of a currency to EUR.",
  schema: { type: "object", properties: { currency: { type: "string" } }, required: ["currency"] },
  execute: ({ currency }) => ({ currency, rate: currency === "USD" ? 0.92 : 1 }),
}];
`;

/** The run file: four model steps, each with tool calls, then the answer. */
export function runText(options: { stream?: boolean; prompt?: string; extra?: string } = {}): string {
  return `run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: analyst
  backend: agent
  model: "test:"
  stream: ${options.stream ?? false}
  tools_folder: tools
${options.extra ?? ""}
  script:
    model: answer-1
    turns:
      - tool_calls: [{ name: read_file, args: { path: /input/revenue.csv } }]
        usage: { input: 30, output: 12 }
      - tool_calls: [{ name: rate, args: { currency: USD } }, { name: read_file, args: { path: /input/absent.csv } }]
        usage: { input: 50, output: 10 }
      - tool_calls: [{ name: write_file, args: { path: /output/report.md, content: "Q3: 48.2 (44.3 EUR)" } }]
      - text: "Revenue grew 12% in Q3."
        usage: { input: 60, output: 9 }
prompt: ${options.prompt ?? "What was the revenue growth in Q3?"}
inputs: [{ uri: "file://INPUT", as: revenue.csv }]
outputs: [answer.txt]
`;
}

/** A recorded run and where it lives. */
export interface Recorded extends AsyncDisposable {
  dir: string;
  /** The run file. */
  file: string;
  /** The input's file. */
  input: string;
  runs: string;
  store: FileStore;
  catalog: Catalog;
  outcome: RunOutcome;
  /** The recorded run. */
  source: RunRecord;
  /** Its events. */
  events(id?: string): Promise<EvidenceEvent[]>;
  /** The names of the run folders under the runs root. */
  folders(): Promise<string[]>;
}

/**
 * Records a run in a new folder.
 *
 * @param options The run file's stream flag, prompt and extra agent keys.
 */
export async function recorded(options: Parameters<typeof runText>[0] = {}): Promise<Recorded> {
  const dir = await Deno.makeTempDir({ prefix: "replay-" });
  await Deno.mkdir(join(dir, "tools"));
  await Deno.writeTextFile(join(dir, "tools", "rates.ts"), RATES);
  const input = join(dir, "revenue.csv");
  await Deno.writeTextFile(input, "quarter,revenue\nQ2,43.0\nQ3,48.2\n");
  const file = join(dir, "run.yaml");
  await Deno.writeTextFile(file, runText(options).replace("INPUT", input));
  const runs = join(dir, "runs");
  const store = new FileStore({ runs });
  const catalog = await Catalog.open({ config: {} });
  const outcome = await runFile(await RunFile.load(file), { store, catalog });
  if (outcome.status !== "completed") {
    throw new Error(`the recorded run failed: ${JSON.stringify(outcome.error)}`);
  }
  const source = await store.readRun(outcome.runId);
  return {
    dir,
    file,
    input,
    runs,
    store,
    catalog,
    outcome,
    source,
    async events(id = outcome.runId) {
      return readEventsText((await (await store.readRun(id)).eventsText())!).events;
    },
    async folders() {
      // the store keeps its log in .log/ under the runs root
      return (await Array.fromAsync(Deno.readDir(runs))).map((e) => e.name).filter((n) => !n.startsWith("."))
        .sort();
    },
    async [Symbol.asyncDispose]() {
      await catalog.close();
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
