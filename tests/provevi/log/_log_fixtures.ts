/** Helpers of the log's tests: leaves, a file log in a temporary folder, a witness. */
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { FileLog } from "../../../lib/provevi/log/file_log.ts";
import type { RunLeaf } from "../../../lib/provevi/log/run_leaf.ts";
import { Witness } from "../../../lib/provevi/log/witness.ts";

/** A leaf of a made-up run. */
export function fakeLeaf(i: number): RunLeaf {
  const hex = (n: number) => n.toString(16).padStart(64, "0");
  return {
    run_id: `run-20261201T000000Z-${i.toString(16).padStart(8, "0")}`,
    manifest_sha256: hex(i + 1),
    last_hash: hex(i + 2),
    attestation_sha256: i % 2 ? hex(i + 3) : null,
  };
}

/** A file log in a new temporary folder. */
export async function tempLog(): Promise<{ log: FileLog; dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "log-test-" });
  return { log: new FileLog(join(dir, "runs")), dir };
}

/** A witness of the log, with its own state folder. */
export async function witnessOf(log: FileLog, name = "witness.test/w1"): Promise<Witness> {
  const key = (await log.key({ create: true }))!;
  const state = await Deno.makeTempDir({ prefix: "witness-state-" });
  return new Witness({ name, seed: new Uint8Array(randomBytes(32)), state, logs: [key.verifier] });
}
