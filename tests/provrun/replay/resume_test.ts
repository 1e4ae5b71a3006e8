/**
 * `resumeRun` and the check of a resumed run with its cut run: a cut run goes on from its evidence, linked to
 * it, and the two verify as one history; a call that may have run stops the resume unless its tool is
 * idempotent; a sealed run, a run still being written and a broken one are refused; and a pair that does not
 * agree (the cut run gone, a served event changed or lost) is reported by `verifyRun` with its code.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import {
  holdWriterLock,
  releaseWriterLock,
  WRITER_LOCK,
} from "../../../lib/provevi/evidence/writer_process.ts";
import { ResumeStopped } from "../../../lib/provrun/replay/replay_errors.ts";
import { resumeRun } from "../../../lib/provrun/replay/resume_run.ts";
import { recorded } from "./_setup.ts";
import { cutRun, putPayload, resealed } from "./_runs.ts";

/** The number of events up to and with the nth event of a type. */
function through(events: EvidenceEvent[], type: string, nth: number): number {
  const at = events.map((e, i) => (e.type === type ? i : -1)).filter((i) => i >= 0)[nth - 1]!;
  return at + 1;
}

Deno.test("a run cut after a call of an idempotent tool was asked for resumes: the recorded steps served, the call run again, the pair verifies", async () => {
  await using r = await recorded();
  const events = await r.events();
  // Cut after the rate tool's result: read_file of /input/absent.csv was asked for in the same answer.
  const keep = events.findIndex((e) => e.type === "tool_called" && e.data.tool === "rate") + 1;
  const cut = await cutRun(r.runs, r.outcome.runId, keep);
  const resumed = await resumeRun(await r.store.readRun(cut), { store: r.store, catalog: r.catalog });
  assert.equal(resumed.run.status, "completed", JSON.stringify(resumed.run.error));
  assert.deepEqual(resumed.served, { model_calls: 2, tool_calls: 2, tools_ran: 2 });
  assert.ok(resumed.check?.ok, JSON.stringify(resumed.check?.problems));
  const created = (await r.events(resumed.run.runId))[0]!;
  assert.deepEqual([created.data.resumed_from, created.data.parent_run], [cut, cut]);
  assert.equal(
    await Deno.readTextFile(join(resumed.run.folder, "output", "report.md")),
    "Q3: 48.2 (44.3 EUR)",
  );
  await assert.rejects(
    () => Deno.stat(join(r.runs, cut, "evidence", "manifest.json")),
    "the cut run is left as it is",
  );
});

Deno.test("a run cut after a call of a tool not declared idempotent was asked for stops before it starts, naming the call", async () => {
  await using r = await recorded();
  const cut = await cutRun(r.runs, r.outcome.runId, through(await r.events(), "model_called", 2));
  const before = await r.folders();
  await assert.rejects(
    async () => resumeRun(await r.store.readRun(cut), { store: r.store }),
    (e) =>
      e instanceof ResumeStopped &&
      /the call call-2-1 of rate \(model step 2\) was requested and its result not recorded, and rate is not declared idempotent/
        .test(e.message) &&
      /provr run --from run-\S+ --at 2/.test(e.message),
  );
  assert.deepEqual(await r.folders(), before);
});

Deno.test("resume refuses a sealed run, a run still being written and a run whose chain breaks", async () => {
  await using r = await recorded();
  await assert.rejects(() => resumeRun(r.source, { store: r.store }), /is sealed, so it was not cut/);
  const cut = await cutRun(r.runs, r.outcome.runId, 8);
  await Deno.remove(join(r.runs, cut, WRITER_LOCK));
  const lock = holdWriterLock(join(r.runs, cut));
  try {
    await assert.rejects(
      async () => resumeRun(await r.store.readRun(cut), { store: r.store }),
      /is still being written/,
    );
  } finally {
    releaseWriterLock(join(r.runs, cut), lock);
  }
  const broken = await cutRun(r.runs, r.outcome.runId, 8);
  const path = join(r.runs, broken, "evidence", "events.jsonl");
  const lines = (await Deno.readTextFile(path)).split("\n");
  lines[3] = lines[3]!.replace('"actor":"ada"', '"actor":"eve"');
  await Deno.writeTextFile(path, lines.join("\n"));
  await Deno.writeTextFile(join(r.runs, broken, WRITER_LOCK), "");
  await assert.rejects(
    async () => resumeRun(await r.store.readRun(broken), { store: r.store }),
    /evidence does not hold/,
  );
});

Deno.test("verifyRun checks a resumed run with its cut run: gone, a served event changed, a recorded step lost", async () => {
  await using r = await recorded();
  const cut = await cutRun(r.runs, r.outcome.runId, through(await r.events(), "model_called", 3));
  const resumed = await resumeRun(await r.store.readRun(cut), { store: r.store, catalog: r.catalog });
  assert.ok(resumed.check?.ok, JSON.stringify(resumed.check?.problems));
  const codes = async (id: string) =>
    (await verifyRun(await r.store.readRun(id), { store: r.store })).problems.map((p) => p.code);
  const changed = await resealed(r.runs, resumed.run.runId, async (events, folder) => {
    const served = events.find((e) => e.type === "model_called")!;
    served.data.response_payload = await putPayload(folder, `{"content":[],"changed":true}`);
    return events;
  });
  assert.deepEqual(await codes(changed), ["resume.served_unknown", "resume.step_missing"]);
  const lost = await resealed(r.runs, resumed.run.runId, (events) => {
    const i = events.findIndex((e) => e.type === "tool_called" && e.data.tool === "rate");
    return events.filter((_, k) => k !== i);
  });
  assert.deepEqual(await codes(lost), ["resume.step_missing"]);
  await Deno.remove(join(r.runs, cut), { recursive: true });
  assert.deepEqual(await codes(resumed.run.runId), ["resume.source_missing"]);
});
