/**
 * The recorder's cost per step (event + span + a 10 KB payload) in microseconds, against the bare FileStore
 * append of the same line, in the same run. Target: the recorder adds under 100 µs per step.
 *
 * A second line is the profile that says where a step's time goes, measured in the same rounds: the same steps
 * again with payloads already stored (the payload is hashed, not written again), and the payloads' bytes written
 * bare, each as a new file with `createNew` (what `putPayload` did in format 1, and does for a payload of
 * 256 KiB or more) and all appended to one open file (what it does in format 2: a record of `payloads.pack`).
 * It also gives the step's CPU time (user and system) beside the bare append's, and how often the process
 * waited (for a disk, a lock, the event loop) and was preempted, from its context switch counts: on a
 * machine shared with other work, the clock counts the time a step waits for a core, and its CPU time does not;
 * a step that never waits loses its time to the other processes' use of the cores, not to the disk.
 * @module
 */
import process from "node:process";
import type { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { EvidenceRecorder } from "../../lib/provrun/run/recorder.ts";
import { median } from "./_report.ts";

const N = 5_000;

/** The microseconds per item of `n` items since `t`. */
function perItem(t: number, n: number): number {
  return ((performance.now() - t) * 1000) / n;
}

/** The process's CPU time (user and system) in microseconds per item of `n` items since `from`. */
function cpuPerItem(from: NodeJS.CpuUsage, n: number): number {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / n;
}

/**
 * The process's context switches so far (`getrusage`): voluntary ones are waits (a disk, a lock, the event
 * loop, a helper thread idle), involuntary ones a core taken by another process.
 */
function switches(): { waits: number; preempted: number } {
  const usage = process.resourceUsage();
  return { waits: usage.voluntaryContextSwitches, preempted: usage.involuntaryContextSwitches };
}

/** Runs `N` recorded steps, each naming its payload: microseconds per step, of the clock and of CPU time. */
async function steps(
  recorder: EvidenceRecorder,
  payloads: readonly Uint8Array[],
): Promise<{ wall: number; cpu: number; waits: number; preempted: number }> {
  const before = switches();
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (let i = 0; i < payloads.length; i++) {
    await recorder.step(
      "tool_called",
      { component: "bench", spanName: "execute_tool bench" },
      async () => ({ payload: await recorder.payload(payloads[i]!), data: { tool: "bench", n: i } }),
    );
  }
  const wall = perItem(t, payloads.length);
  const used = cpuPerItem(cpu, payloads.length);
  const after = switches();
  const per1000 = (key: "waits" | "preempted") => ((after[key] - before[key]) * 1000) / payloads.length;
  return { wall, cpu: used, waits: per1000("waits"), preempted: per1000("preempted") };
}

/** The same lines appended bare to a new run of the store: microseconds per line, of the clock and of CPU. */
async function bareAppend(
  store: FileStore,
  options: { from: string; runId: string },
): Promise<{ wall: number; cpu: number }> {
  const text = await Deno.readTextFile(options.from);
  const lines: { line: string; event: ReturnType<EventChain["next"]>["event"] }[] = [];
  for (const line of text.trimEnd().split("\n")) lines.push({ line, event: JSON.parse(line) });
  const bare = await store.openRun(options.runId);
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (const { line, event } of lines) await bare.append(line, event);
  const us = { wall: perItem(t, lines.length), cpu: cpuPerItem(cpu, lines.length) };
  await bare.seal();
  return us;
}

/** The payloads' bytes written bare: each a new file, and all appended to one open file (µs per payload). */
function bareWrites(folder: string, payloads: readonly Uint8Array[]): { file: number; append: number } {
  Deno.mkdirSync(`${folder}/files`, { recursive: true });
  let t = performance.now();
  payloads.forEach((bytes, i) => Deno.writeFileSync(`${folder}/files/${i}`, bytes, { createNew: true }));
  const file = perItem(t, payloads.length);
  const pack = Deno.openSync(`${folder}/one.pack`, { createNew: true, write: true, append: true });
  t = performance.now();
  for (const bytes of payloads) {
    for (let at = 0; at < bytes.length;) at += pack.writeSync(bytes.subarray(at));
  }
  const append = perItem(t, payloads.length);
  pack.close();
  return { file, append };
}

/** One round's figures, in µs per step or per payload. */
interface Round {
  step: number;
  stored: number;
  bare: number;
  /** The step's CPU time, and the bare append's. */
  stepCpu: number;
  bareCpu: number;
  /** Per 1,000 steps: the step's waits (voluntary context switches), and its preemptions. */
  waits: number;
  preempted: number;
  file: number;
  append: number;
}

async function round(dir: string, n: number, payloads: readonly Uint8Array[]): Promise<Round> {
  const store = new FileStore({ runs: dir });
  const recorder = new EvidenceRecorder(await store.openRun(`run-rec-${n}`), {
    actor: "bench",
    mode: "strict",
  });
  recorder.startRoot("invoke_agent bench");
  recorder.onEvent = null;
  const step = await steps(recorder, payloads);
  const stored = await steps(recorder, payloads); // the same payloads: hashed, found stored, not written
  await recorder.seal();
  const bare = await bareAppend(store, {
    from: `${dir}/run-rec-${n}/evidence/events.jsonl`,
    runId: `run-bare-${n}`,
  });
  return {
    step: step.wall,
    stored: stored.wall,
    bare: bare.wall,
    stepCpu: step.cpu,
    bareCpu: bare.cpu,
    waits: step.waits,
    preempted: step.preempted,
    ...bareWrites(`${dir}/bare-${n}`, payloads),
  };
}

/** Runs the benchmark and prints its line and the profile's. */
export async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bench-recorder-" });
  const payloads = Array.from({ length: N }, (_, i) => {
    const bytes = new Uint8Array(10 * 1024);
    bytes.fill(97);
    new DataView(bytes.buffer).setUint32(0, i);
    return bytes;
  });
  const rounds: Round[] = [];
  for (let n = 0; n < 5; n++) rounds.push(await round(dir, n, payloads));
  const m = (key: keyof Round) => median(rounds.map((r) => r[key]));
  const [rec, stored, bare, file, append] = [m("step"), m("stored"), m("bare"), m("file"), m("append")];
  const [recCpu, bareCpu, waits, preempted] = [m("stepCpu"), m("bareCpu"), m("waits"), m("preempted")];
  console.log(
    `recorder step (event + span + 10 KB payload): ${rec.toFixed(1)} µs; bare FileStore append ${
      bare.toFixed(1)
    } µs; ` +
      `the recorder adds ${(rec - bare).toFixed(1)} µs per step; ratio ${
        (rec / bare).toFixed(2)
      } (target: adds < 100 µs)`,
  );
  console.log(
    `recorder step profile: event + span + payload hash add ${
      (stored - bare).toFixed(1)
    } µs to the bare append; ` +
      `the payload's write ${(rec - stored).toFixed(1)} µs (bare: a new 10 KB file ${file.toFixed(1)} µs, ` +
      `the same bytes appended to one open file ${append.toFixed(1)} µs; ` +
      `CPU time: a step ${recCpu.toFixed(1)} µs, the bare append ${
        bareCpu.toFixed(1)
      } µs, the recorder adds ${(recCpu - bareCpu).toFixed(1)} µs; per 1,000 steps ${
        waits.toFixed(1)
      } waits and ${preempted.toFixed(1)} preemptions; load ${
        Deno.loadavg().map((l) => l.toFixed(1)).join(" ")
      })`,
  );
  await Deno.remove(dir, { recursive: true });
}

if (import.meta.main) await main();
