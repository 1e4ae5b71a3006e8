import assert from "node:assert/strict";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { writeDaemonFile } from "../../../lib/provevi/receiver/daemon_file.ts";
import { SpanDaemon } from "../../../lib/provevi/receiver/span_daemon.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { FAKE_ANSWER, startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { gitCatalog } from "../_catalog.ts";
import { eventsOf, needed, program, receivedSpans, spanRows } from "./_programs.ts";
import { peerTest } from "../../_peers.ts";

const CLAUDE = program("claude-code");

peerTest("claude-code", {
  name:
    "with PROVE_SERVE, a claude-code run opens with prove serve, its program sends its spans there with the " +
    "run's key, and the seal brings them into the chain",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const claude = needed(CLAUDE.path, "PROVRUN_TEST_CLAUDE");
    await using provider = startFakeAgentProvider([
      { name: "Write", input: { file_path: "{cwd}/output/answer.md", content: FAKE_ANSWER + "\n" } },
    ]);
    await using t = await gitCatalog({ "finance/revenue.csv": "quarter,revenue\nQ3,48.2\n" });
    await using daemon = SpanDaemon.start(new FileStore({ runs: t.runs }));
    const file = `${t.runs}/../serve.json`;
    await writeDaemonFile(file, { url: daemon.url, secret: daemon.secret, pid: Deno.pid });
    const outcome = await runFile(
      RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: analyst
  backend: claude-code
  program: ${JSON.stringify(claude)}
  model: anthropic:claude-sonnet-4-5
  provider: { base_url: ${JSON.stringify(provider.url)}, api_key_env: FAKE_ANTHROPIC_KEY }
  limits: { seconds: 120 }
prompt: Write the answer to output/answer.md.
outputs: [answer.md]
`),
      {
        catalog: t.catalog,
        runs: t.runs,
        env: (n) => (n === "FAKE_ANTHROPIC_KEY" ? "sk-fake" : n === "PROVE_SERVE" ? file : Deno.env.get(n)),
      },
    );
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    const events = await eventsOf(t.runs, outcome.runId);
    const started = events.find((e) => e.type === "sandbox_started")!;
    assert.match(String(started.data.receiver), new RegExp(`^${daemon.url}/runs/[0-9a-f]{32}/v1/traces$`));
    const batches = events.filter((e) => e.type === "spans_received");
    assert.ok(batches.length >= 1, events.map((e) => e.type).join(" "));
    const spans = await receivedSpans(t.runs, outcome.runId);
    assert.equal(spans.length, batches.reduce((n, e) => n + (e.data.spans as number), 0));
    // a reader gets a row of each span, and the chain has the batches before the program's end
    assert.ok((await spanRows(outcome.folder)).length >= spans.length);
    const completed = events.find((e) => e.type === "sandbox_completed")!;
    assert.equal(completed.data.spans, spans.length);
    assert.ok(events.indexOf(batches[0]!) < events.indexOf(completed));
    await assert.rejects(Deno.stat(`${outcome.folder}/received.spans`), Deno.errors.NotFound);
    assert.ok(
      !events.some((e) => e.type === "telemetry_problem" && /prove serve|key/.test(String(e.data.problem))),
    );
    // the run is sealed with the daemon: it is open there no more
    assert.deepEqual(daemon.open, []);
    const check = await verifyRun(await findRun(outcome.folder));
    assert.ok(check.ok, JSON.stringify(check.problems));
  },
});

Deno.test("with PROVE_SERVE naming a daemon that is not there, or that refuses the run, a program run fails in one line, sealed, before its program starts", async () => {
  await using t = await gitCatalog({ "x.txt": "x" });
  await using daemon = SpanDaemon.start(new FileStore({ runs: t.runs }), { maxRuns: 1 });
  const full = `${t.runs}/../full.json`;
  await writeDaemonFile(full, { url: daemon.url, secret: daemon.secret, pid: Deno.pid });
  const other = await new FileStore({ runs: t.runs }).openRun("run-20261130T120000Z-0000f111");
  const taken = await fetch(`${daemon.url}/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${daemon.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ run_id: other.runId }),
  });
  assert.equal(taken.status, 201);
  await taken.body?.cancel();
  for (
    const [file, says] of [
      [
        `${t.runs}/../absent.json`,
        /cannot read prove serve's connection file .*absent\.json.*set PROVE_SERVE to the file it printed/,
      ],
      [
        full,
        /prove serve at http:\/\/127\.0\.0\.1:\d+ did not open run .*: prove serve: the daemon holds its limit of 1 open runs/,
      ],
    ] as const
  ) {
    const outcome = await runFile(
      RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent: { name: a, backend: claude-code, model: "anthropic:claude-sonnet-4-5", program: /nonexistent/agent-program }
prompt: hi
`),
      {
        catalog: t.catalog,
        runs: t.runs,
        env: (n) => (n === "PROVE_SERVE" ? file : n === "ANTHROPIC_API_KEY" ? "sk-fake" : undefined),
      },
    );
    assert.equal(outcome.status, "failed");
    assert.equal(outcome.error?.name, "ProveviError");
    assert.match(outcome.error!.message, says);
    assert.doesNotMatch(outcome.error!.message, /\n/);
    const events = await eventsOf(t.runs, outcome.runId);
    assert.ok(!events.some((e) => e.type === "sandbox_started"));
    assert.equal(events.at(-1)!.type, "run_failed");
    assert.ok((await verifyRun(await findRun(outcome.folder))).ok);
  }
  await other.seal();
});
