import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { spanDuration } from "../../cli/_listing.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";

const RUNS = new URL("../../fixtures/runs/", import.meta.url).pathname;
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"; // the fixture run's

async function run(args: string[]) {
  const io = bufferIo();
  const code = await prove(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

Deno.test("prove trace prints a trace's spans as a tree, each under its parent, with its events", async () => {
  const r = await run(["--runs", RUNS, "trace", TRACE]);
  assert.equal(r.code, 0, r.err);
  // The steps are children of the run's root span, and the model call of the sandbox's: each under its parent.
  assert.deepEqual(r.out.split("\n"), [
    `trace ${TRACE}: 8 spans in run ${SAMPLE_RUN_ID}`,
    "START  DURATION  SPAN              EVENTS  NAME",
    "+0ms   18.0ms    0000000000000001  0,12    invoke_agent revenue-question",
    "-      -         0000000000000002  1,2       access_requested",
    "-      -         0000000000000003  3,4       context_resolved",
    "-      -         0000000000000004  5         input_staged",
    "-      -         0000000000000005  6,7,9     sandbox_started",
    "+11ms  1.4ms     0000000000000006  8           chat answer",
    "-      -         0000000000000007  10        input_verified",
    "-      -         0000000000000008  11        output_artifact_created",
  ]);
});

Deno.test("prove trace --json gives each span with its run, parent, times, source and events", async () => {
  const r = await run(["--runs", RUNS, "trace", `tr-${TRACE}`, "--json"]);
  assert.equal(r.code, 0, r.err);
  const json = JSON.parse(r.out);
  assert.equal(json.trace_id, TRACE);
  const chat = json.spans.find((s: { span_id: string }) => s.span_id === "0000000000000006");
  assert.deepEqual(
    [chat.run_id, chat.parent_span_id, chat.name, chat.source, chat.seqs, chat.duration_ms],
    [SAMPLE_RUN_ID, "0000000000000005", "chat answer", "evidence", [8], 1.4],
  );
});

Deno.test("prove trace refuses a text that is not a trace ID (exit 2) and a trace no run carries (exit 1)", async () => {
  const bad = await run(["--runs", RUNS, "trace", "nope"]);
  assert.deepEqual([bad.code, bad.out], [2, ""]);
  assert.equal(
    bad.err,
    `prove: "nope" is not a trace ID: write its 32 hex digits (or MLflow's tr-<32 hex digits>)`,
  );
  const none = await run(["--runs", RUNS, "trace", "f".repeat(32)]);
  assert.deepEqual([none.code, none.out], [1, ""]);
  assert.match(none.err, /^prove: no run in store file carries the trace f{32}: /);
  const dir = await Deno.makeTempDir();
  try {
    const missing = await run(["--runs", join(dir, "none"), "trace", TRACE]);
    assert.equal(missing.code, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("spanDuration() writes microseconds, milliseconds, seconds and minutes as a person reads them", () => {
  assert.deepEqual(
    [null, 0.466, 1.4, 24.84, 159.2, 1520, 184_000].map(spanDuration),
    ["-", "466µs", "1.4ms", "24.8ms", "159ms", "1.52s", "3m04s"],
  );
});
