/**
 * Appending events through FileStore (1 KB data, no payload): events per second, as a ratio to raw
 * `writeSync` appends of the same bytes in the same run. Target: at least 0.5.
 * @module
 */
import { join } from "node:path";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { median, report } from "./_report.ts";

/** Runs the benchmark and prints its line. */
export async function main(): Promise<void> {
  const N = 20_000;
  const dir = await Deno.makeTempDir({ prefix: "bench-file-store-" });
  const chain = new EventChain("run-bench");
  const prepared = [];
  for (let i = 0; i < N; i++) {
    const next = chain.next({
      type: "note_added",
      component: "agent",
      actor: "bench",
      data: { text: "x".repeat(1000) },
    });
    chain.accept(next);
    prepared.push(next);
  }
  const encoder = new TextEncoder();
  const storeRates: number[] = [];
  const rawRates: number[] = [];
  for (let round = 0; round < 5; round++) {
    const store = new FileStore({ runs: dir });
    const writer = await store.openRun(`run-bench-${round}`);
    let t = performance.now();
    for (const { line, event } of prepared) await writer.append(line, event);
    storeRates.push(N / ((performance.now() - t) / 1000));
    await writer.seal();

    using raw = Deno.openSync(join(dir, `raw-${round}.jsonl`), { create: true, write: true, append: true });
    t = performance.now();
    for (const { line } of prepared) {
      const bytes = encoder.encode(line + "\n");
      let offset = 0;
      while (offset < bytes.length) offset += raw.writeSync(bytes.subarray(offset));
    }
    rawRates.push(N / ((performance.now() - t) / 1000));
  }
  report("FileStore append (1 KB data)", median(storeRates), median(rawRates), "events/s", ">= 0.5");
  await Deno.remove(dir, { recursive: true });
}

if (import.meta.main) await main();
