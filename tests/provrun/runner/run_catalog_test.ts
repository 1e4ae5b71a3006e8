import assert from "node:assert/strict";
import { join } from "node:path";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import type { BackendJob } from "../../../lib/provrun/backends/backend.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { CallBackend, INLINE_MAX_BYTES } from "../../../lib/provrun/backends/call_backend.ts";
import { gitCatalog } from "../_catalog.ts";

const CSV = "quarter,revenue\nQ2,43.0\nQ3,48.2\n";

function runYaml(inputs: string, extra = ""): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: q
  backend: call
  model: "test:"
  script: { model: answer-1, turns: [{ text: "Revenue grew 12% in Q3.", usage: { input: 30, output: 9 } }] }
${extra}
prompt: What was the revenue growth in Q3?
inputs:
${inputs}
outputs: [answer.txt]
`);
}

async function eventsOf(runs: string, runId: string) {
  const record = await new FileStore({ runs }).readRun(runId);
  return { record, events: readEventsText((await record.eventsText())!).events };
}

Deno.test("a run with inputs and outputs writes every event of the plan in order, and the chain verifies", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV, "finance/notes/a.txt": "a\n" });
  const file = runYaml(
    `  - { uri: "data://acme/demo/dev/finance/revenue.csv?at=branch:main", as: revenue.csv }
  - { uri: "data://acme/demo/dev/finance/notes", as: notes }`,
  );
  const outcome = await runFile(file, { catalog: t.catalog, runs: t.runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  assert.deepEqual(events.map((e) => e.type), [
    "run_created",
    "access_requested",
    "access_granted",
    "context_resolved",
    "snapshot_materialized",
    "access_requested",
    "access_granted",
    "context_resolved",
    "snapshot_materialized",
    "input_staged",
    "input_staged",
    "sandbox_started",
    "prompt_rendered",
    "model_called",
    "sandbox_completed",
    "input_verified",
    "input_verified",
    "output_artifact_created",
    "run_completed",
  ]);
  const commit = await (await import("../_catalog.ts")).git(t.repo, "rev-parse", "HEAD");
  const staged = events.find((e) => e.type === "input_staged")!;
  assert.deepEqual(staged.refs, [`data://acme/demo/dev/finance/revenue.csv?at=commit:${commit}`]);
  assert.equal(await Deno.readTextFile(join(outcome.folder, "input", "revenue.csv")), CSV);
  assert.equal(
    (await Deno.stat(join(outcome.folder, "input", "revenue.csv"))).mode! & 0o222,
    0,
    "inputs are read-only",
  );
  // One trace: every event names the run's trace; top-level steps are children of the root span.
  const root = events[0]!;
  assert.ok(events.every((e) => e.trace_id === root.trace_id && e.trace_id !== null));
  assert.equal(events.at(-1)!.span_id, root.span_id);
  const model = events.find((e) => e.type === "model_called")!;
  assert.ok(model.started_at && model.parent_span_id);
  assert.deepEqual((await verifyRun(record)).problems.map((p) => p.message), []);
});

Deno.test("the broker's denial of an input from another environment is written as access_denied, and the run fails cleanly", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const outcome = await runFile(runYaml(`  - { uri: "data://acme/demo/prod/finance/revenue.csv" }`), {
    catalog: t.catalog,
    runs: t.runs,
  });
  assert.equal(outcome.status, "failed");
  assert.equal(outcome.error?.name, "AccessDenied");
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  assert.deepEqual(events.map((e) => e.type), [
    "run_created",
    "access_requested",
    "access_denied",
    "run_failed",
  ]);
  assert.equal(events[2]!.data.reason, "the URI is in environment prod, and the run is in dev");
  assert.deepEqual((await verifyRun(record)).problems.map((p) => p.message), []);
});

Deno.test("the broker denies a physical URI outside dev, written as access_denied", async () => {
  await using t = await gitCatalog({ "x.csv": CSV });
  const file = RunFile.fromObject({
    ...runYaml(`  - { uri: "file://${t.repo}/x.csv" }`).data,
    run: { org: "acme", domain: "demo", env: "prod", actor: "ada", mode: "strict" },
  });
  const outcome = await runFile(file, { catalog: t.catalog, runs: t.runs });
  const { events } = await eventsOf(t.runs, outcome.runId);
  assert.equal(events[2]!.type, "access_denied");
  assert.match(String(events[2]!.data.reason), /only in dev/);
});

class TamperingBackend extends CallBackend {
  protected override async work(
    job: BackendJob,
    signal: AbortSignal,
    emit: Parameters<CallBackend["work"]>[2],
  ) {
    const text = await super.work(job, signal, emit);
    const path = join(job.ctx.folder, "input", "revenue.csv");
    await Deno.chmod(path, 0o644);
    await Deno.writeTextFile(path, "quarter,revenue\nQ3,99.9\n");
    return text;
  }
}

Deno.test("an input changed during the run is caught by input_verified and by verifyRun", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const outcome = await runFile(
    runYaml(`  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }`),
    {
      catalog: t.catalog,
      runs: t.runs,
      backend: new TamperingBackend(),
    },
  );
  assert.equal(outcome.status, "failed");
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  const verified = events.find((e) => e.type === "input_verified")!;
  assert.equal(verified.data.ok, false);
  assert.equal(events.at(-1)!.type, "run_failed");
  const check = await verifyRun(record);
  assert.ok(
    check.problems.map((p) => p.message).includes(
      `events.jsonl line ${
        verified.seq + 1
      } (seq ${verified.seq}, input_verified): input "revenue.csv" changed during the run`,
    ),
    check.problems.map((p) => p.message).join("\n"),
  );
});

Deno.test("a run that names an experiment records its pin and hash, and commits its bundle; verifyRun checks both", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const { writeExperiment } = await import("../../../lib/provevi/experiments/experiment.ts");
  const pinned = await writeExperiment(t.catalog, "data://acme/demo/dev/experiments/q", {
    kind: "agent-eval",
    description: "Does the model read the numbers right?",
    inputs: ["data://acme/demo/dev/finance/revenue.csv"],
    metrics: ["accuracy"],
  }, "the experiment");
  const base = runYaml(`  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }`).data;
  const file = RunFile.fromObject({
    ...base,
    run: { ...base.run, bundle: true },
    experiment: "experiment://acme/demo/dev/experiments/q",
  });
  // The experiment:// scheme routes to the same repository.
  const { Catalog } = await import("../../../lib/provcat/catalog.ts");
  await using catalog = await Catalog.open({
    config: {
      cache: join(t.root, "cache2"),
      stores: { lake: { type: "git", path: t.repo } },
      routes: [
        { prefix: "data://acme/demo/dev", store: "lake" },
        { prefix: "experiment://acme/demo/dev", store: "lake" },
        { prefix: "run://acme/demo/dev", store: "lake", path: "runs" },
      ],
    },
  });
  const outcome = await runFile(file, { catalog, runs: t.runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  assert.equal(events[0]!.data.experiment_pin, pinned.pin.replace("data://", "experiment://"));
  assert.equal(events[0]!.data.experiment_sha256, pinned.sha256);
  // The broker granted provrun's own read of the experiment, recorded as an input's grant is.
  assert.deepEqual(
    events.slice(1, 3).map((e) => [e.type, e.component, e.refs, e.data.mode]),
    [
      ["access_requested", "StubBroker", ["experiment://acme/demo/dev/experiments/q"], "pinned_read"],
      ["access_granted", "StubBroker", ["experiment://acme/demo/dev/experiments/q"], "pinned_read"],
    ],
  );
  assert.match(outcome.bundle!.pinned!, /^run:\/\/acme\/demo\/dev\/run-\S+\?at=commit:[0-9a-f]{40}$/);
  const check = await verifyRun(record, { catalog });
  assert.deepEqual(check.problems.map((p) => p.message), []);
  assert.equal(check.bundle, outcome.bundle!.pinned);
  // Export checks the experiment and the bundle through the catalog, before and after the copy.
  const { exportRun } = await import("../../../lib/provevi/runs/export_run.ts");
  const { SqliteStore } = await import("../../../lib/provevi/sqlite/sqlite_store.ts");
  await using to = new SqliteStore(join(t.root, "evidence.db"), { runs: join(t.root, "indexed") });
  const copied = await exportRun(outcome.runId, { from: new FileStore({ runs: t.runs }), to }, { catalog });
  assert.deepEqual(copied.problems.map((p) => p.message), []);
  await assert.rejects(
    () =>
      exportRun(outcome.runId, {
        from: new FileStore({ runs: t.runs }),
        to: new SqliteStore(join(t.root, "b.db"), { runs: join(t.root, "b") }),
      }),
    /does not verify/,
  );
});

Deno.test("a run whose experiment is in another environment records access_denied for it, pins nothing, and fails", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": CSV });
  const uri = "experiment://acme/demo/prod/experiments/q";
  const base = runYaml(`  - { uri: "data://acme/demo/dev/finance/revenue.csv" }`).data;
  const outcome = await runFile(RunFile.fromObject({ ...base, experiment: uri }), {
    catalog: t.catalog,
    runs: t.runs,
  });
  assert.equal(outcome.status, "failed");
  assert.equal(outcome.error?.name, "AccessDenied");
  const { events } = await eventsOf(t.runs, outcome.runId);
  assert.equal(events[0]!.data.experiment_pin, null);
  assert.deepEqual(events.slice(1, 3).map((e) => [e.type, e.refs, e.data.mode]), [
    ["access_requested", [uri], "pinned_read"],
    ["access_denied", [uri], "pinned_read"],
  ]);
  assert.equal(events.some((e) => e.type === "context_resolved" || e.type === "access_granted"), false);
});

Deno.test("a call whose inputs pass what it inlines fails in one line, PayloadTooLarge, and its evidence verifies", async () => {
  await using t = await gitCatalog({ "finance/big.csv": "q,r\n" + "x".repeat(INLINE_MAX_BYTES) + "\n" });
  const file = runYaml(`  - { uri: "data://acme/demo/dev/finance/big.csv?at=branch:main", as: big.csv }`);
  const outcome = await runFile(file, { catalog: t.catalog, runs: t.runs });
  assert.equal(outcome.status, "failed");
  assert.equal(outcome.error?.name, "PayloadTooLarge");
  assert.match(
    outcome.error!.message,
    /^input big\.csv is 33554437 bytes: the call backend inlines at most 33554432/,
  );
  assert.ok(!outcome.error!.message.includes("\n"));
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  assert.ok(!events.some((e) => e.type === "model_called"), "no model call was made");
  assert.equal((await verifyRun(record)).ok, true);
});
