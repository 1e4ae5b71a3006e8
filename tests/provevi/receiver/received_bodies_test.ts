import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { appendSealedSpans, takenBodies } from "../../../lib/provevi/receiver/daemon_client.ts";
import { RECEIVED_JSON_FILE } from "../../../lib/provevi/receiver/daemon_run.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { packRecord } from "../../../lib/provevi/evidence/payload_pack.ts";
import { jsonSpans, openInStore, tempStore } from "./_daemon.ts";

const utf8 = new TextEncoder();
const time = "2026-11-30T12:00:00.000000Z";

/** The event prove serve hands back for one body. */
function batchOf(sha256: string) {
  return {
    type: "spans_received",
    component: "SpanReceiver",
    time,
    payload: sha256,
    data: { encoding: "json", services: [], spans: 1 },
  };
}

Deno.test("a writer takes received bodies while the run goes on, whole records only, and its seal stores the rest once each", async () => {
  await using t = await tempStore();
  const run = await openInStore(t.store, "run-20261130T120000Z-0000b0d1");
  const folder = run.writer.folder;
  const path = join(folder, RECEIVED_JSON_FILE);
  const bodies = ["a", "b", "c"].map((name) => utf8.encode(jsonSpans(1, name)));
  const shas = bodies.map((b) => sha256Hex(b));
  const records = bodies.map((b, i) => packRecord(shas[i]!, b));
  const stored: string[] = [];
  const store = async (bytes: Uint8Array) => {
    const sha = await run.recorder.payload(bytes);
    stored.push(sha!);
    return sha;
  };
  const taken = takenBodies(folder);
  await taken.json.take(store); // no file yet: nothing
  // the first record whole, the second cut part way, as the daemon's append is seen while it writes
  await Deno.writeFile(path, new Uint8Array([...records[0]!, ...records[1]!.subarray(0, 40)]));
  await taken.json.take(store);
  assert.deepEqual(stored, [shas[0]]);
  await Deno.writeFile(path, records[1]!.subarray(40), { append: true });
  await Deno.writeFile(path, records[2]!, { append: true });
  await taken.json.take(store);
  assert.deepEqual(stored, [shas[0], shas[1], shas[2]]);
  // a body the daemon took after the last take is stored by the seal; the others are not stored again
  const late = utf8.encode(jsonSpans(1, "late"));
  await Deno.writeFile(path, packRecord(sha256Hex(late), late), { append: true });
  const events = [...shas, sha256Hex(late), shas[0]!].map(batchOf);
  const sealed = { run_id: run.writer.runId, spans: 5, refused: 0, events };
  assert.equal(await appendSealedSpans(run.recorder, sealed, { folder, taken }), 5);
  assert.deepEqual(stored, [shas[0], shas[1], shas[2]]);
  await run.recorder.seal();
  const record = await findRun(folder);
  const kept = readEventsText((await record.eventsText())!).events.filter((e) => e.type === "spans_received");
  assert.deepEqual(kept.map((e) => e.payload), events.map((e) => e.payload));
  for (const e of kept) assert.ok(await record.payload(e.payload!));
  assert.ok((await verifyRun(record)).ok);
  await assert.rejects(() => Deno.lstat(path), Deno.errors.NotFound);
});

Deno.test("takes stop at a record that is not one, and the seal names the bodies past it with no payload", async () => {
  await using t = await tempStore();
  const run = await openInStore(t.store, "run-20261130T120000Z-0000b0d2");
  const folder = run.writer.folder;
  const good = utf8.encode(jsonSpans(1, "good"));
  const after = utf8.encode(jsonSpans(1, "after"));
  const junk = utf8.encode("this is not a record's header\n");
  await Deno.writeFile(
    join(folder, RECEIVED_JSON_FILE),
    new Uint8Array([...packRecord(sha256Hex(good), good), ...junk, ...packRecord(sha256Hex(after), after)]),
  );
  const taken = takenBodies(folder);
  const stored: (string | null)[] = [];
  const store = async (bytes: Uint8Array) => {
    const sha = await run.recorder.payload(bytes);
    stored.push(sha);
    return sha;
  };
  await taken.json.take(store);
  await taken.json.take(store);
  assert.deepEqual(stored, [sha256Hex(good)]);
  const sealed = {
    run_id: run.writer.runId,
    spans: 2,
    refused: 0,
    events: [batchOf(sha256Hex(good)), batchOf(sha256Hex(after))],
  };
  // the bodies past bytes that are no record are lost, not their events (the daemon counted their spans)
  assert.equal(await appendSealedSpans(run.recorder, sealed, { folder, taken }), 3);
  await run.recorder.seal();
  const events = readEventsText(await Deno.readTextFile(join(folder, "evidence", "events.jsonl"))).events;
  assert.deepEqual(
    events.filter((e) => e.type === "spans_received").map((e) => e.payload ?? null),
    [sha256Hex(good), null],
  );
  const problem = events.find((e) => e.type === "telemetry_problem");
  assert.match(
    String(problem?.data.problem),
    /^1 bodies that prove serve's answer names are in neither received.spans nor received-json.spans \(received-json.spans at byte \d+: not a record's header\)/,
  );
  assert.ok((await verifyRun(await findRun(folder))).ok);
  // a body no file ever held, with nothing broken, is a forged answer still: nothing is written
  const other = await openInStore(t.store, "run-20261130T120000Z-0000b0d4");
  await assert.rejects(
    () => appendSealedSpans(other.recorder, sealed, { folder: other.writer.folder }),
    /the daemon's answer names a body [0-9a-f]+ that neither received.spans nor received-json.spans of the run holds/,
  );
});

Deno.test("a take of a run that takes no more payloads stops, and leaves its bodies for the seal", async () => {
  await using t = await tempStore();
  const run = await openInStore(t.store, "run-20261130T120000Z-0000b0d3");
  const folder = run.writer.folder;
  const body = utf8.encode(jsonSpans(1));
  await Deno.writeFile(join(folder, RECEIVED_JSON_FILE), packRecord(sha256Hex(body), body));
  const taken = takenBodies(folder);
  let calls = 0;
  const refusing = () => (calls++, Promise.reject(new Error("run is sealed")));
  await taken.json.take(refusing);
  await taken.json.take(refusing);
  assert.equal(calls, 1);
  const sealed = { run_id: run.writer.runId, spans: 1, refused: 0, events: [batchOf(sha256Hex(body))] };
  assert.equal(await appendSealedSpans(run.recorder, sealed, { folder, taken }), 1);
  await run.recorder.seal();
  assert.ok((await verifyRun(await findRun(folder))).ok);
});

Deno.test("a record another process wrote to received.spans, taken while the run went on, is named by a telemetry_problem at the seal", async () => {
  await using t = await tempStore();
  const run = await openInStore(t.store, "run-20261130T120000Z-0000b0d4");
  const folder = run.writer.folder;
  const body = utf8.encode(jsonSpans(1, "sent"));
  const stranger = utf8.encode("bytes nobody sent to prove serve");
  await Deno.writeFile(
    join(folder, RECEIVED_JSON_FILE),
    new Uint8Array([...packRecord(sha256Hex(body), body), ...packRecord(sha256Hex(stranger), stranger)]),
  );
  const taken = takenBodies(folder);
  await taken.json.take((bytes) => run.recorder.payload(bytes));
  const sealed = { run_id: run.writer.runId, spans: 1, refused: 0, events: [batchOf(sha256Hex(body))] };
  assert.equal(await appendSealedSpans(run.recorder, sealed, { folder, taken }), 2);
  await run.recorder.seal();
  const record = await findRun(folder);
  const problems = readEventsText((await record.eventsText())!).events.filter((e) =>
    e.type === "telemetry_problem"
  );
  assert.equal(problems.length, 1);
  assert.match(
    String(problems[0]!.data.problem),
    new RegExp(
      `1 bodies of received.spans or received-json.spans are stored as payloads that no spans_received event .* ${
        sha256Hex(stranger)
      }`,
    ),
  );
  assert.ok((await verifyRun(record)).ok);
});
