/**
 * `prove diff` of two runs of 10,000 events each (3,330 model steps of a call and two tool calls, every request,
 * answer, argument and result a payload of its own) that diverge at step 3,000 of 3,330: the time `diffRuns`
 * takes to find the first divergence and list every difference, beside the time of reading the two runs alone
 * (`readEventsText` of each run's events, as `prove show` reads them), in the same run; in wall time and in the
 * process's CPU time (what an idle machine would show, where many share one). Target: under 100 ms.
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import type { Json } from "../../lib/provevi/evidence/event.ts";
import type { RunRecord } from "../../lib/provevi/evidence/record.ts";
import type { RunWriter } from "../../lib/provevi/store/store.ts";
import { diffRuns } from "../../lib/provevi/diff/diff_runs.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { median, report } from "./_report.ts";

const STEPS = 3330;
const DIVERGES = 3000;

/** Writes one run: its setup, its steps (diverging at `diverges` when given), its end. */
async function writeRun(store: FileStore, runId: string, diverges: number | null): Promise<void> {
  const writer = await store.openRun(runId);
  const chain = new EventChain(runId);
  const add = async (type: string, data: { [key: string]: Json }, payload: string | null = null) => {
    const next = chain.next({ type, component: "AgentBackend", actor: "bench", data, payload });
    await writer.append(next.line, next.event);
    chain.accept(next);
  };
  const put = (writer: RunWriter, value: unknown) =>
    writer.putPayload(new TextEncoder().encode(JSON.stringify(value)));
  await add(
    "run_created",
    { agent: "bench", spec: { model: "test:" }, mode: "strict" },
    await put(writer, "run file"),
  );
  for (const name of ["revenue.csv", "costs.csv", "rates.csv"]) {
    await add("input_staged", { name, kind: "file", sha256: "0".repeat(64) });
  }
  await add("sandbox_started", { tools: [{ name: "read_file" }, { name: "rate" }] });
  await add("prompt_rendered", { chars: 40 }, await put(writer, "What was the revenue growth in Q3?"));
  let history = "";
  for (let step = 1; step <= STEPS; step++) {
    const changed = diverges !== null && step >= diverges;
    const answer = {
      content: [{ type: "text", text: `step ${step}${changed ? " (other)" : ""}` }],
      usage: { step },
    };
    const request = { params: { prompt: [{ role: "user", content: "Q3?" }], history: history.slice(-400) } };
    history += answer.content[0]!.text;
    const calls = [{ id: `c${step}a`, name: "read_file" }, { id: `c${step}b`, name: "rate" }];
    await add("model_called", {
      model: "test:",
      input_tokens: 10,
      output_tokens: 2,
      tool_calls: calls,
      response_payload: await put(writer, answer),
    }, await put(writer, request));
    for (const c of calls) {
      await add("tool_called", {
        tool: c.name,
        call_id: c.id,
        error: null,
        executed_by: "sandbox",
        result_payload: await put(writer, { rows: step, of: c.name }),
      }, await put(writer, { path: `/input/${step}.csv` }));
    }
  }
  for (const type of ["trace_imported", "sandbox_completed", "output_artifact_created"]) {
    await add(type, { status: "ok" });
  }
  await add("run_completed", { status: "completed" });
  await writer.seal();
}

/** Runs the benchmark and prints its line. */
export async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bench-diff-" });
  const store = new FileStore({ runs: join(dir, "runs") });
  await writeRun(store, "run-a", null);
  await writeRun(store, "run-b", DIVERGES);
  const a: RunRecord = await store.readRun("run-a");
  const b: RunRecord = await store.readRun("run-b");
  const events = readEventsText((await a.eventsText())!).events.length;
  const first = await diffRuns(a, b); // warm the page cache and the code
  if (first.first?.step !== DIVERGES || first.a.events !== events) {
    throw new Error(`the diff found ${JSON.stringify(first.first)} in runs of ${first.a.events} events`);
  }
  if (events !== 10_000) {
    throw new Error(`the runs have ${events} events, not 10,000`);
  }
  // Wall time, and the process's CPU time: on a machine many share, the second says what an idle one would show.
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const m = { diff: [] as number[], read: [] as number[], diffCpu: [] as number[], readCpu: [] as number[] };
  for (let round = 0; round < 7; round++) {
    let [t, c] = [performance.now(), cpu()];
    await diffRuns(a, b);
    m.diff.push(performance.now() - t);
    m.diffCpu.push(cpu() - c);
    [t, c] = [performance.now(), cpu()];
    for (const r of [a, b]) readEventsText((await r.eventsText())!);
    m.read.push(performance.now() - t);
    m.readCpu.push(cpu() - c);
  }
  const name = `prove diff of two ${events.toLocaleString("en-US")}-event runs diverging at step ${DIVERGES}`;
  const target = "< 100 ms, beside reading the two runs alone";
  report(name, median(m.diff), median(m.read), "ms", target);
  report(`${name}, CPU time`, median(m.diffCpu), median(m.readCpu), "ms", target);
  await store.close();
  await Deno.remove(dir, { recursive: true });
}

if (import.meta.main) await main();
