/**
 * What signing the seal and checking the signature add to a run, in milliseconds per run, beside the 1 ms the
 * issue allows and beside Ed25519 itself (WebCrypto's sign and verify of the same statement). Target: under
 * 1 ms each (ratio under 1).
 *
 * - Signing: runs like the fixture run (its events and payloads, written again under a new ID) are sealed in
 *   pairs, one plain and one signed, in either order by turns, the signed one as provr does it: the key read
 *   through `readSigningKey` as each `provr run` reads it, and the seal signed and its signature written and
 *   fsynced with the manifest. The figure is the median of each pair's difference: all that signing adds to a
 *   run, the fsync of one more file included. Beside it, the same difference in the process's CPU time: on a
 *   busy disk a seal's fsyncs vary by tens of milliseconds from one seal to the next, more than signing adds,
 *   and the CPU time says what signing itself costs whatever the disk does.
 * - Checking: `verifyRun` with `--trust` of a signed copy of the fixture run less `verifyRun` of an unsigned copy,
 *   in turn, the median of the differences: the attestation read, its statement built and compared, and the
 *   signature verified.
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import { attestRun, runStatement, statementBytes } from "../../lib/provevi/evidence/attestation.ts";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { FileRunRecord } from "../../lib/provevi/store/file_run_record.ts";
import { readSigningKey, readTrustedKey, writeKeyPair } from "../../lib/provevi/evidence/signing_key.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { median, report } from "./_report.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { FIXTURE } from "../provevi/_tamper.ts";
import { copyFolder } from "../_files.ts";

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bench-signature-" });
  const keyPath = join(dir, "signing.key");
  const { publicPath, keyid } = await writeKeyPair(keyPath);
  const trust = [await readTrustedKey(publicPath)];
  const lines = (await Deno.readTextFile(join(FIXTURE, "evidence", "events.jsonl"))).trimEnd().split("\n");
  const fixtureEvents = lines.map((l) => JSON.parse(l));
  const payloads = new Map<string, Uint8Array>();
  for (const e of fixtureEvents) {
    if (e.payload) {
      payloads.set(e.payload, await Deno.readFile(join(FIXTURE, "evidence", "payloads", e.payload)));
    }
  }
  const store = new FileStore({ runs: join(dir, "runs") });
  let n = 0;
  /** Writes a run like the fixture; gives the time of its seal, of the clock and of CPU, in milliseconds. */
  const oneRun = async (sign: boolean): Promise<{ wall: number; cpu: number }> => {
    const runId = `run-20261130T120000Z-${(n++).toString(16).padStart(8, "0")}`;
    const writer = await store.openRun(runId);
    const chain = new EventChain(runId);
    for (const e of fixtureEvents) {
      if (e.payload) await writer.putPayload(payloads.get(e.payload)!);
      const next = chain.next({
        type: e.type,
        component: e.component,
        actor: e.actor,
        refs: e.refs,
        // A signed run's run_created names its key, as provr records it.
        data: sign && e.type === "run_created" ? { ...e.data, signing_key: keyid } : e.data,
        payload: e.payload,
        confidence: e.confidence,
        trace_id: e.trace_id,
        span_id: e.span_id,
        parent_span_id: e.parent_span_id,
        started_at: e.started_at,
        time: e.time,
      });
      await writer.append(next.line, next.event);
      chain.accept(next);
    }
    const cpu = process.cpuUsage();
    const t = performance.now();
    await writer.seal(sign ? { signingKey: await readSigningKey(keyPath) } : {});
    const wall = performance.now() - t;
    const used = process.cpuUsage(cpu);
    return { wall, cpu: (used.user + used.system) / 1000 };
  };
  await oneRun(true); // the first read of the key, which a long-lived caller does once
  const plainSeal: number[] = [];
  const signedSeal: number[] = [];
  const signingAdds: number[] = [];
  const signingAddsCpu: number[] = [];
  for (let round = 0; round < 140; round++) {
    // In turn, and each pair in either order, so that the disk's state favours neither.
    const first = round % 2 === 0;
    const a = await oneRun(first);
    const b = await oneRun(!first);
    const [signed, plain] = first ? [a, b] : [b, a];
    if (round < 20) continue; // warming up
    plainSeal.push(plain.wall);
    signedSeal.push(signed.wall);
    signingAdds.push(signed.wall - plain.wall);
    signingAddsCpu.push(signed.cpu - plain.cpu);
  }

  const signedCopy = join(dir, "signed", SAMPLE_RUN_ID);
  const plainCopy = join(dir, "plain", SAMPLE_RUN_ID);
  await Deno.mkdir(join(dir, "signed"));
  await Deno.mkdir(join(dir, "plain"));
  await copyFolder(FIXTURE, signedCopy);
  await copyFolder(FIXTURE, plainCopy);
  const signedRecord = new FileRunRecord(SAMPLE_RUN_ID, signedCopy);
  const plainRecord = new FileRunRecord(SAMPLE_RUN_ID, plainCopy);
  await attestRun(signedRecord, await readSigningKey(keyPath));
  const checkAdds: number[] = [];
  for (let round = 0; round < 250; round++) {
    let t = performance.now();
    const plain = await verifyRun(plainRecord);
    const plainTime = performance.now() - t;
    t = performance.now();
    const signed = await verifyRun(signedRecord, { trust });
    const signedTime = performance.now() - t;
    if (!plain.ok || !signed.ok || signed.signedBy.length !== 1) {
      throw new Error([...plain.problems, ...signed.problems].join("\n") || "the signature was not checked");
    }
    if (round >= 50) checkAdds.push(signedTime - plainTime);
  }

  // Ed25519 alone, over the fixture run's statement.
  const key = await readSigningKey(keyPath);
  const body = statementBytes(runStatement(
    lines.join("\n") + "\n",
    await Deno.readTextFile(
      join(FIXTURE, "evidence", "manifest.json"),
    ),
  ));
  const sig = new Uint8Array(await crypto.subtle.sign("Ed25519", key.key, body));
  const edSign: number[] = [];
  const edVerify: number[] = [];
  for (let round = 0; round < 300; round++) {
    let t = performance.now();
    await crypto.subtle.sign("Ed25519", key.key, body);
    edSign.push(performance.now() - t);
    t = performance.now();
    await crypto.subtle.verify("Ed25519", trust[0]!.key, sig, body);
    edVerify.push(performance.now() - t);
  }
  const ms = (x: number) => x.toFixed(2);
  report(
    `signing at the seal adds, per run (a signed seal less a plain one, in turn; Ed25519 sign alone ${
      ms(median(edSign))
    } ms; seal ${ms(median(plainSeal))} ms, signed seal ${
      ms(median(signedSeal))
    } ms; in CPU time signing adds ${ms(median(signingAddsCpu))} ms)`,
    median(signingAdds),
    1,
    "ms",
    "< 1",
  );
  report(
    `checking the signature adds, per run (verifyRun --trust of a signed run less verifyRun of the same run unsigned; Ed25519 verify ${
      ms(median(edVerify))
    } ms)`,
    median(checkAdds),
    1,
    "ms",
    "< 1",
  );
  await Deno.remove(dir, { recursive: true });
}

if (import.meta.main) await main();
