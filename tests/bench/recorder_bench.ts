/**
 * The recorder's cost per step (event + span + a 10 KB payload) in microseconds, against the bare FileStore
 * append of the same line, in the same run. Target: the recorder adds under 100 µs per step.
 * @module
 */
import type { EventChain } from "../../lib/provevi/evidence/mod.ts";
import { FileStore } from "../../lib/provevi/mod.ts";
import { EvidenceRecorder } from "../../lib/provrun/mod.ts";
import { median } from "./_report.ts";

/** Runs the benchmark and prints its line. */
export async function main(): Promise<void> {
  const N = 5_000;
  const dir = await Deno.makeTempDir({ prefix: "bench-recorder-" });
  const payloads = Array.from({ length: N }, (_, i) => {
    const bytes = new Uint8Array(10 * 1024);
    bytes.fill(97);
    new DataView(bytes.buffer).setUint32(0, i);
    return bytes;
  });
  const recorderUs: number[] = [];
  const bareUs: number[] = [];
  for (let round = 0; round < 5; round++) {
    const store = new FileStore({ runs: dir });
    const recorder = new EvidenceRecorder(await store.openRun(`run-rec-${round}`), {
      actor: "bench",
      mode: "strict",
    });
    recorder.startRoot("invoke_agent bench");
    const lines: { line: string; event: ReturnType<EventChain["next"]>["event"] }[] = [];
    recorder.onEvent = null;
    let t = performance.now();
    for (let i = 0; i < N; i++) {
      await recorder.step(
        "tool_called",
        { component: "bench", spanName: "execute_tool bench" },
        async () => ({
          payload: await recorder.payload(payloads[i]!),
          data: { tool: "bench", n: i },
        }),
      );
    }
    recorderUs.push(((performance.now() - t) * 1000) / N);
    await recorder.seal();
    // The same lines, appended bare.
    const text = await Deno.readTextFile(`${dir}/run-rec-${round}/evidence/events.jsonl`);
    for (const line of text.trimEnd().split("\n")) lines.push({ line, event: JSON.parse(line) });
    const bare = await store.openRun(`run-bare-${round}`);
    t = performance.now();
    for (const { line, event } of lines) await bare.append(line, event);
    bareUs.push(((performance.now() - t) * 1000) / lines.length);
    await bare.seal();
  }
  const rec = median(recorderUs);
  const bare = median(bareUs);
  console.log(
    `recorder step (event + span + 10 KB payload): ${rec.toFixed(1)} µs; bare FileStore append ${
      bare.toFixed(1)
    } µs; ` +
      `the recorder adds ${(rec - bare).toFixed(1)} µs per step; ratio ${
        (rec / bare).toFixed(2)
      } (target: adds < 100 µs)`,
  );
  await Deno.remove(dir, { recursive: true });
}

if (import.meta.main) await main();
