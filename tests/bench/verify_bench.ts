/**
 * `verifyRun` (every check `prove verify` makes, the signed seal with a trusted key among them) of a run whose
 * payloads total 256 MiB: bytes per second, as a ratio to `node:crypto` SHA-256 of the same bytes in memory, in
 * the same run. Target: at least 0.7.
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { attestRun } from "../../lib/provevi/evidence/attestation.ts";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { readSigningKey, readTrustedKey, writeKeyPair } from "../../lib/provevi/evidence/signing_key.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { median, report } from "./_report.ts";

/** Runs the benchmark and prints its line. */
export async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bench-verify-" });
  const store = new FileStore({ runs: dir });
  const writer = await store.openRun("run-bench");
  const chain = new EventChain("run-bench");
  const created = chain.next({ type: "run_created", component: "RunContext", actor: "bench" });
  await writer.append(created.line, created.event);
  chain.accept(created);
  const chunk = 16 << 20; // 16 payloads of 16 MiB
  const buffers: Uint8Array[] = [];
  for (let i = 0; i < 16; i++) {
    const bytes = new Uint8Array(chunk);
    crypto.getRandomValues(bytes.subarray(0, 65536));
    for (let o = 65536; o < chunk; o += 65536) bytes.copyWithin(o, 0, 65536);
    bytes[0] = i;
    buffers.push(bytes);
    const payload = await writer.putPayload(bytes);
    const next = chain.next({ type: "tool_called", component: "bench", actor: "bench", payload });
    await writer.append(next.line, next.event);
    chain.accept(next);
  }
  const done = chain.next({ type: "run_completed", component: "RunContext", actor: "bench" });
  await writer.append(done.line, done.event);
  chain.accept(done);
  await writer.seal();
  const total = chunk * 16;
  const record = await store.readRun("run-bench");
  const { publicPath } = await writeKeyPair(join(dir, "signing.key"));
  await attestRun(record, await readSigningKey(join(dir, "signing.key")));
  const trust = [await readTrustedKey(publicPath)];
  const verify = (r: typeof record) => verifyRun(r, { trust });
  await verify(record); // warm the page cache, as a second verify would find it
  const verifyRates: number[] = [];
  const hashRates: number[] = [];
  for (let round = 0; round < 5; round++) {
    let t = performance.now();
    const check = await verify(record);
    if (!check.ok) throw new Error(check.problems.join("\n"));
    verifyRates.push(total / ((performance.now() - t) / 1000));
    t = performance.now();
    for (const b of buffers) createHash("sha256").update(b).digest("hex");
    hashRates.push(total / ((performance.now() - t) / 1000));
  }
  const mib = (n: number) => n / (1 << 20);
  report(
    "verifyRun, signed and trusted (256 MiB of payloads)",
    mib(median(verifyRates)),
    mib(median(hashRates)),
    "MiB/s",
    ">= 0.7",
  );
  await Deno.remove(dir, { recursive: true });
}

if (import.meta.main) await main();
