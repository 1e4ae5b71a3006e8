/**
 * `replayRun`: an unchanged run replays identical, step for step, with nothing run and the link recorded; each
 * deliberate change (the prompt, a tools module, the pinned input, a model answer) is the divergence at its
 * step; a run whose evidence cannot be served is refused in one line, before any run folder is made.
 */
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { RunNotReplayable } from "../../../lib/provrun/replay/replay_errors.ts";
import { replayRun } from "../../../lib/provrun/replay/replay_run.ts";
import { recorded } from "./_setup.ts";
import { cutRun, dropPayload, putPayload, resealed } from "./_runs.ts";

for (const stream of [false, true]) {
  Deno.test(`an unchanged run replays identical, every answer and result served, nothing run, the link recorded (${stream ? "streamed" : "not streamed"})`, async () => {
    await using r = await recorded({ stream });
    const replay = await replayRun(r.source, { store: r.store, catalog: r.catalog });
    assert.equal(replay.run.status, "completed", JSON.stringify(replay.run.error));
    assert.ok(replay.identical, JSON.stringify(replay.divergence));
    assert.deepEqual(replay.served, { model_calls: 4, tool_calls: 4, tools_ran: 0 });
    const events = await r.events(replay.run.runId);
    const created = events[0]!;
    assert.equal(created.data.replayed_from, r.outcome.runId);
    assert.equal(created.data.parent_run, r.outcome.runId);
    const started = events.find((e) => e.type === "sandbox_started")!;
    assert.equal(started.data.served, true);
    assert.equal(events.find((e) => e.type === "sandbox_completed")!.data.workers_started, 0);
    const source = await r.events();
    for (const e of events.filter((e) => e.type === "model_called" || e.type === "tool_called")) {
      const from = e.data.served_from as { run_id: string; seq: number };
      assert.equal(from.run_id, r.outcome.runId);
      assert.equal(source[from.seq]!.type, e.type);
      assert.equal(source[from.seq]!.payload, e.payload, "the same request, the same arguments");
    }
    assert.equal(
      await Deno.readTextFile(join(replay.run.folder, "output", "report.md")),
      "Q3: 48.2 (44.3 EUR)",
    );
    assert.ok((await verifyRun(await r.store.readRun(replay.run.runId), { store: r.store })).ok);
  });
}

Deno.test("a changed prompt is the divergence at the setup, and the replay stops at the first request", async () => {
  await using r = await recorded();
  const text = await Deno.readTextFile(r.file);
  await Deno.writeTextFile(
    r.file,
    text.replace("What was the revenue growth in Q3?", "What was Q3's growth?"),
  );
  const replay = await replayRun(r.source, { store: r.store, catalog: r.catalog });
  assert.equal(replay.identical, false);
  assert.deepEqual([replay.divergence?.phase, replay.divergence?.what], ["setup", "prompt"]);
  assert.match(
    replay.divergence!.detail,
    /line 1: "What was the revenue growth in Q3\?" vs "What was Q3's growth\?"/,
  );
  assert.equal(replay.run.status, "failed");
  assert.equal(replay.run.error?.name, "ReplayDiverged");
  assert.match(
    replay.run.error!.message,
    /step 1: the request of model call 1 differs from the run's at params\.prompt/,
  );
  const step = replay.diff.differences.find((d) => d.phase === "step")!;
  assert.deepEqual([step.step, step.what], [1, "prompt"]);
});

Deno.test("a changed tools module is the divergence at the setup, naming the module", async () => {
  await using r = await recorded();
  const path = join(r.dir, "tools", "rates.ts");
  await Deno.writeTextFile(path, (await Deno.readTextFile(path)).replace("0.92", "0.93"));
  const replay = await replayRun(r.source, { store: r.store, catalog: r.catalog });
  assert.deepEqual([replay.divergence?.phase, replay.divergence?.what], ["setup", "tools"]);
  assert.match(replay.divergence!.detail, /the tools module rates\.ts has sha256 /);
  assert.equal(replay.run.status, "completed", "the served results go on");
});

Deno.test("a changed pinned input is the divergence at the setup, naming the input", async () => {
  await using r = await recorded();
  await Deno.writeTextFile(r.input, "quarter,revenue\nQ2,43.0\nQ3,49.9\n");
  const replay = await replayRun(r.source, { store: r.store, catalog: r.catalog });
  assert.deepEqual([replay.divergence?.phase, replay.divergence?.what], ["setup", "inputs"]);
  assert.match(replay.divergence!.detail, /input revenue\.csv has sha256 /);
});

Deno.test("a changed model answer is the divergence at its step: the tool call it asks for is not the recorded one", async () => {
  await using r = await recorded();
  const changed = await resealed(r.runs, r.outcome.runId, async (events, folder) => {
    const call = events.filter((e) => e.type === "model_called")[1]!;
    const stored = await new FileRunRecord(call.run_id, folder).payload(call.data.response_payload as string);
    const reply = JSON.parse(new TextDecoder().decode(stored));
    reply.content[0].input = JSON.stringify({ currency: "GBP" });
    call.data.response_payload = await putPayload(folder, JSON.stringify(reply));
    return events;
  });
  assert.ok((await verifyRun(await r.store.readRun(changed))).ok, "the changed run verifies");
  const replay = await replayRun(await r.store.readRun(changed), { store: r.store, catalog: r.catalog });
  assert.equal(replay.run.error?.name, "ReplayDiverged");
  assert.match(
    replay.run.error!.message,
    /step 2: the arguments of rate \(call-2-1\) differ at currency: "USD" recorded, "GBP" now/,
  );
  const first = replay.divergence!;
  assert.deepEqual([first.phase, first.step], ["step", 2]);
});

Deno.test("a run whose evidence cannot be served is refused in one line, before any run folder is made", async () => {
  await using r = await recorded();
  const before = await r.folders();
  const refused = async (source: Parameters<typeof replayRun>[0], pattern: RegExp, file?: string) => {
    const error = await replayRun(source, { store: r.store, catalog: r.catalog, ...(file ? { file } : {}) })
      .then(
        () => null,
        (e) => e,
      );
    assert.ok(error instanceof RunNotReplayable, String(error));
    assert.match(error.message, pattern);
    assert.equal(error.message.split("\n").length, 1);
  };
  // A payload missing: the run does not verify.
  const missing = await resealed(r.runs, r.outcome.runId, (events) => events);
  const reply = (await r.events(missing)).find((e) => e.type === "model_called")!.data
    .response_payload as string;
  await dropPayload(join(r.runs, missing), reply);
  await refused(
    await r.store.readRun(missing),
    new RegExp(`does not verify \\(payloads/${reply} is missing`),
  );
  // A run cut before its end: it is resumed, not replayed.
  await refused(
    await r.store.readRun(await cutRun(r.runs, r.outcome.runId, 6)),
    /was cut before its end .*provr resume/,
  );
  // An agent program's run: its model calls are not provr's to serve.
  const program = await resealed(r.runs, r.outcome.runId, (events) => {
    events[0]!.data.backend = "claude-code";
    return events;
  });
  await refused(await r.store.readRun(program), /ran the claude-code backend/);
  // The tools folder, then the run file, no longer where they were.
  await Deno.rename(join(r.dir, "tools"), join(r.dir, "tools.old"));
  await refused(
    r.source,
    /the tools folder .*tools \(agent\.tools_folder of .*run\.yaml\) is no longer where it was/,
  );
  await Deno.rename(join(r.dir, "tools.old"), join(r.dir, "tools"));
  await Deno.rename(r.file, join(r.dir, "moved.yaml"));
  await refused(
    r.source,
    /the run file .*run\.yaml of run "run-\S+" is no longer where it was: give it \(--file FILE\)/,
  );
  assert.equal((await r.folders()).length, before.length + 3, "only the copies this test made");
  const given = await replayRun(r.source, {
    store: r.store,
    catalog: r.catalog,
    file: join(r.dir, "moved.yaml"),
  });
  assert.ok(given.identical, JSON.stringify(given.divergence));
});
