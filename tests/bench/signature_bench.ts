/**
 * What signing the seal and checking the signature add to a run: `attestRun` and the signature check of
 * `verifyRun` (`checkAttestation` with a trusted key) on the fixture run, in milliseconds per run, beside the
 * 1 ms the issue allows. Target: under 1 ms each (ratio under 1).
 * @module
 */
import { join } from "node:path";
import {
  attestRun,
  checkAttestation,
  FileRunRecord,
  readEventsText,
  readSigningKey,
  readTrustedKey,
  writeKeyPair,
} from "../../lib/provevi/mod.ts";
import { median, report } from "./_report.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { fixtureCopy } from "../provevi/_tamper.ts";

/** Runs the benchmark and prints its lines. */
export async function main(): Promise<void> {
  const { dir, folder } = await fixtureCopy();
  const { publicPath } = await writeKeyPair(join(dir, "signing.key"));
  const key = await readSigningKey(join(dir, "signing.key"));
  const trust = [await readTrustedKey(publicPath)];
  const record = new FileRunRecord(SAMPLE_RUN_ID, folder);
  const events = readEventsText((await record.eventsText())!).events;
  const sign: number[] = [];
  const check: number[] = [];
  for (let round = 0; round < 200; round++) {
    let t = performance.now();
    await attestRun(record, key);
    sign.push(performance.now() - t);
    t = performance.now();
    const result = await checkAttestation(record, events, { trust });
    check.push(performance.now() - t);
    if (result.problems.length) throw new Error(result.problems.join("\n"));
  }
  report("signing the seal (attestRun, fixture run)", median(sign), 1, "ms", "< 1");
  report("checking the signature (trusted key, fixture run)", median(check), 1, "ms", "< 1");
  await Deno.remove(dir, { recursive: true });
}

if (import.meta.main) await main();
