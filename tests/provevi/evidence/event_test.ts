import assert from "node:assert/strict";
import { join } from "node:path";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import { eventProblems, formatMicros, payloadsOf } from "../../../lib/provevi/evidence/event.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { jsonLineWeight } from "../../../lib/provevi/evidence/json_depth.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../_sample_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";

const FIXTURES = new URL("../../../fixtures/", import.meta.url).pathname;

Deno.test("eventLine() writes RFC 8785 canonical JSON: sorted keys, ES number and string forms", () => {
  const chain = new EventChain("r");
  const { line } = chain.next({
    type: "t",
    component: "c",
    actor: "a",
    time: "2026-11-29T12:00:00.000000Z",
    data: { z: 1e21, a: 0.1, "\u20ac": "\u2028", b: [1, -0, 1.5e-7], "\r": "\u00e9\ud83d\ude00" },
  });
  assert.equal(
    line,
    '{"actor":"a","component":"c","confidence":"observed","data":{"\\r":"é😀","a":0.1,"b":[1,0,1.5e-7],"z":1e+21,"€":"\u2028"},' +
      '"parent_span_id":null,"payload":null,"prev":null,"refs":[],"run_id":"r","seq":0,"span_id":null,"started_at":null,' +
      '"time":"2026-11-29T12:00:00.000000Z","trace_id":null,"type":"t"}',
  );
});

Deno.test("EventChain chains each line to the SHA-256 of the line before it", () => {
  const chain = new EventChain("r");
  const a = chain.next({ type: "run_created", component: "RunContext", actor: "me" });
  chain.accept(a);
  const b = chain.next({ type: "run_completed", component: "RunContext", actor: "me" });
  assert.equal(a.event.prev, null);
  assert.equal(b.event.prev, sha256Hex(a.line));
  assert.equal(b.event.seq, 1);
  assert.throws(() => chain.accept(a), RangeError);
  assert.deepEqual(readEventsText(`${a.line}\n${b.line}\n`).problems, []);
});

Deno.test("a lost event leaves no gap: the chain moves only on accept", () => {
  const chain = new EventChain("r");
  const lost = chain.next({ type: "model_called", component: "x", actor: "me" });
  const kept = chain.next({ type: "model_called", component: "x", actor: "me" });
  assert.equal(lost.event.seq, kept.event.seq);
});

Deno.test("eventProblems() names each missing, unknown or mistyped field", () => {
  assert.deepEqual(eventProblems([]), ["is not a JSON object"]);
  assert.ok(eventProblems({})[0]!.startsWith("lacks the fields run_id, seq, time"));
  const { event } = new EventChain("r").next({ type: "t", component: "c", actor: "a" });
  assert.deepEqual(eventProblems(event), []);
  assert.deepEqual(eventProblems({ ...event, seq: -1, payload: "abc", trace_id: "xyz" }), [
    "seq is not a whole number from 0",
    "payload is neither null nor a SHA-256",
    "trace_id is neither null nor 32 hex digits",
  ]);
});

Deno.test("payloadsOf() finds the payload field and data keys ending in _payload", () => {
  const a = "a".repeat(64), b = "b".repeat(64);
  const { event } = new EventChain("r").next({
    type: "model_called",
    component: "c",
    actor: "a",
    payload: a,
    data: { response_payload: b, other: "c".repeat(64) },
  });
  assert.deepEqual(payloadsOf(event), [a, b]);
});

Deno.test("formatMicros() writes six fraction digits in UTC", () => {
  assert.equal(
    formatMicros(Date.UTC(2026, 9, 31, 18, 20, 26) * 1000 + 242767),
    "2026-10-31T18:20:26.242767Z",
  );
});

Deno.test("the fixture run matches its test vectors, and writing it again gives the same bytes", async () => {
  const vectors = JSON.parse(await Deno.readTextFile(join(FIXTURES, "evidence-vectors.json")));
  const folder = join(FIXTURES, "runs", SAMPLE_RUN_ID);
  const lines = (await Deno.readTextFile(join(folder, "evidence", "events.jsonl"))).trimEnd().split("\n");
  assert.deepEqual(lines.map((l) => sha256Hex(l)), vectors.line_sha256);
  assert.equal(sha256Hex(lines.at(-1)!), vectors.last_hash);
  const manifest = await Deno.readTextFile(join(folder, "evidence", "manifest.json"));
  assert.equal(sha256Hex(manifest), vectors.manifest_sha256);
  const runs = await Deno.makeTempDir();
  // The fixture run is of format 1 (each payload a file), as tests/provevi/write_fixtures.ts writes it.
  await writeSampleRun(await new FileStore({ runs }).openRun(SAMPLE_RUN_ID, { payloads: "files" }));
  const again = join(runs, SAMPLE_RUN_ID, "evidence");
  assert.equal(await Deno.readTextFile(join(again, "events.jsonl")), lines.join("\n") + "\n");
  assert.equal(await Deno.readTextFile(join(again, "manifest.json")), manifest);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("the lines read are weighed before they are parsed: past the weight the rest is not read, in one problem", () => {
  const chain = new EventChain("r");
  const a = chain.next({ type: "run_created", component: "RunContext", actor: "me" });
  chain.accept(a);
  // a line of many empty objects: 3 bytes of text each, some 96 of the heap
  const dense = `[${"{},".repeat(100_000)}{}]`;
  const text = `${a.line}\n${dense}\n${dense}\n${dense}\n`;
  const read = readEventsText(text, { weight: 2 * jsonLineWeight(dense) });
  assert.equal(read.events.length, 1);
  assert.equal(
    read.lines.length,
    2,
    "the first line and one dense line read; the next would pass the weight",
  );
  const last = read.problems.at(-1)!;
  assert.equal(last.code, "events.unreadable");
  assert.match(
    last.message,
    /^events\.jsonl would take more than \d+ bytes of memory read, by line 3: the rest of it is not read$/,
  );
  assert.equal(read.complete, false);
  // a writer's events weigh a few times their text: the default weight reads them all
  assert.ok(jsonLineWeight(a.line) < 6 * a.line.length);
  assert.ok(jsonLineWeight(dense) > 30 * dense.length);
  assert.deepEqual(readEventsText(`${a.line}\n`).problems, []);
});

Deno.test("a text's characters weigh one each: a writer's events whose texts are full of commas or brackets are read whole", () => {
  const chain = new EventChain("r");
  const lines: string[] = [];
  const add = (init: Parameters<EventChain["next"]>[0]) => {
    const e = chain.next(init);
    chain.accept(e);
    lines.push(e.line);
  };
  add({ type: "run_created", component: "RunContext", actor: "me" });
  // what a writer writes: an error's first line, cut to 2,000 characters (errorMessage), as a failed step's message
  const dump = `Unexpected data: ${
    JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ [`k${i}`]: [i] })))
  }`;
  const csv = `bad row: ${",".repeat(1990)}`;
  for (let i = 0; i < 300; i++) {
    add({
      type: "step_failed",
      component: "Tool",
      actor: "me",
      data: { step: "tool_called", error: "Error", message: (i % 2 ? dump : csv).slice(0, 2000) },
    });
  }
  add({ type: "run_failed", component: "RunContext", actor: "me", data: { error: "Error", message: "x" } });
  for (const line of lines) assert.ok(jsonLineWeight(line) < 6 * line.length, `${jsonLineWeight(line)}`);
  // the weight read is six times the text a file holds at most: a file of such events, scaled, is read whole
  const text = `${lines.join("\n")}\n`;
  const read = readEventsText(text, { weight: 6 * text.length });
  assert.deepEqual(read.problems, []);
  assert.equal(read.events.length, lines.length);
  // the values outside a text still weigh, escaped quotes do not end a text
  assert.ok(jsonLineWeight(`{"a":"\\"",${"{},".repeat(1000)}"b":1}`) > 30 * 3000);
  assert.equal(jsonLineWeight(`"${"{},".repeat(1000)}"`), 3002);
});
