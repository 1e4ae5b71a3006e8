/**
 * The work of received_rows_attacks_test.ts that is measured in a process of its own (`measuredInChild`): the
 * seal of a run whose writer took spans from `prove serve` (a daemon in the same process, as the test's own
 * were), after its program made each of the daemon's files a sparse file of 384 MiB.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { SpanDaemon } from "../../lib/provevi/receiver/span_daemon.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { spanBodies } from "../bench/_spans.ts";
import { jsonSpans, writerWithDaemon } from "../provevi/receiver/_daemon.ts";

/**
 * Opens the run `runId` in a file store over `runs` (a new folder) with a daemon as its writer, which takes a
 * protobuf body and a JSON one; makes each of the daemon's files 384 MiB long, of zeros that take no disk (its
 * next records land after them), and posts one body of each kind more. Then, measured: the end of the run's
 * spans and its seal. Gives the run's folder and the SHA-256 of the first two bodies.
 */
export async function sealOverSparse(runs: string, runId: string) {
  const store = new FileStore({ runs });
  const daemon = SpanDaemon.start(store);
  const { run, spans, post } = await writerWithDaemon({ store, runs }, daemon, runId);
  const [first, second] = spanBodies(2);
  assert.equal(await post(first!, "application/x-protobuf"), 200);
  assert.equal(await post(jsonSpans(2, "json.before"), "application/json"), 200);
  for (const name of ["received.spans", "received-json.spans"]) {
    await Deno.truncate(join(run.writer.folder, name), 384 * 1024 * 1024);
  }
  assert.equal(await post(second!, "application/x-protobuf"), 200);
  assert.equal(await post(jsonSpans(3, "json.after"), "application/json"), 200);
  return async () => {
    await spans.close();
    await run.recorder.seal();
    return {
      folder: run.writer.folder,
      first: sha256Hex(first!),
      before: sha256Hex(new TextEncoder().encode(jsonSpans(2, "json.before"))),
    };
  };
}
