/**
 * A replay never reaches the network or a tool, whatever the run holds: a provider the run file points at a
 * server, a tools module and an MCP server that reach a server as they start, a record that holds fewer answers
 * than the loop asks or a call it never recorded as done, a forged record, a policy that approves a telemetry
 * destination. The server counts every request it gets; each attack is stopped (no request, no tool run) and
 * recorded (the replay's record says what it served, or where it diverged, or the replay is refused in one line).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Catalog } from "../../lib/provcat/catalog.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/policy.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import type { RunRecord } from "../../lib/provevi/evidence/record.ts";
import { RunNotReplayable } from "../../lib/provrun/replay/replay_errors.ts";
import { replayRun } from "../../lib/provrun/replay/replay_run.ts";
import { RunFile } from "../../lib/provrun/run/run_file.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { startFakeOpenAI } from "../../fixtures/providers/fake_openai_server.ts";
import { countingTools, startCounter } from "../provrun/replay/_counter.ts";
import { resealed } from "../provrun/replay/_runs.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("replay attacks");
const ROOT = new URL("../../", import.meta.url).pathname;

/** A folder with a store, a catalog and a counter; run files written there. */
async function lab() {
  const dir = await Deno.makeTempDir({ prefix: "attack-replay-" });
  const store = new FileStore({ runs: join(dir, "runs") });
  const catalog = await Catalog.open({ config: {} });
  const counter = startCounter();
  return {
    dir,
    store,
    catalog,
    counter,
    told: () => [...counter.calls.values()].reduce((a, b) => a + b, 0),
    async record(name: string, text: string) {
      const path = join(dir, `${name}.yaml`);
      await Deno.writeTextFile(path, text);
      const outcome = await runFile(await RunFile.load(path), { store, catalog });
      return { path, outcome, source: await store.readRun(outcome.runId) };
    },
    async events(id: string) {
      return readEventsText((await (await store.readRun(id)).eventsText())!).events;
    },
    async [Symbol.asyncDispose]() {
      await counter[Symbol.asyncDispose]();
      await catalog.close();
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const HEAD = `run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }\n`;

Deno.test("a replay reaches no provider, no tools module, no MCP server and no telemetry destination", async () => {
  await using l = await lab();
  await using server = startFakeOpenAI();
  // 1. The run file's model is a provider at a server: the replay asks it nothing, and needs no key.
  const provider = await l.record(
    "provider",
    HEAD + `agent:
  name: q
  backend: agent
  model: "openai-compatible:fake-4o"
  provider: { base_url: "${server.baseUrl}" }
prompt: What was the revenue growth in Q3?
`,
  );
  assert.equal(provider.outcome.status, "completed", JSON.stringify(provider.outcome.error));
  const asked = server.bodies.length;
  const replay = await replayRun(provider.source, {
    store: l.store,
    catalog: l.catalog,
    env: () => undefined,
  });
  const served = (await l.events(replay.run.runId)).filter((e) => e.data.served_from).length;
  tally.add("a provider at a server", {
    stopped: server.bodies.length === asked,
    recorded: replay.identical && served > 0,
  });

  // 2. A tools module that reaches the server as it loads, and a tool that reaches it when called.
  await countingTools(l.dir, { host: l.counter.host, token: "tools" });
  await Deno.writeTextFile(
    join(l.dir, "tools", "loud.ts"),
    `await fetch("http://${l.counter.host}/loud/import");\nexport const TOOLS = [];\n`,
  );
  const tools = await l.record(
    "tools",
    HEAD + `agent:
  name: t
  backend: agent
  model: "test:"
  tools_folder: tools
  net: ["${l.counter.host}"]
  script: { turns: [{ tool_calls: [{ name: count, args: { n: 1 } }] }, { text: "counted" }] }
prompt: Count.
`,
  );
  assert.equal(tools.outcome.status, "completed", JSON.stringify(tools.outcome.error));
  const before = l.told();
  const toolsReplay = await replayRun(tools.source, { store: l.store, catalog: l.catalog });
  const started = (await l.events(toolsReplay.run.runId)).find((e) => e.type === "sandbox_started")!;
  tally.add("a tools module and a tool that reach a server", {
    stopped: l.told() === before,
    recorded: toolsReplay.identical && started.data.served === true && Boolean(started.data.tools_files),
  });

  // 3. The run file given to the replay names an MCP server that reaches the server as it starts.
  const mcp = join(l.dir, "mcp.ts");
  await Deno.writeTextFile(mcp, `await fetch("http://${l.counter.host}/mcp/start");\n`);
  const withMcp = join(l.dir, "with-mcp.yaml");
  await Deno.writeTextFile(
    withMcp,
    (await Deno.readTextFile(tools.path)).replace(
      "  tools_folder: tools",
      `  tools_folder: tools\n  mcp: [{ name: loud, command: [${mcp}] }]`,
    ),
  );
  const mcpReplay = await replayRun(tools.source, { store: l.store, catalog: l.catalog, file: withMcp });
  tally.add("an MCP server that reaches a server as it starts", {
    stopped: l.told() === before && mcpReplay.run.status === "completed",
    recorded: mcpReplay.divergence?.what === "settings",
  });

  // 4. A policy that approves telemetry destinations: a replay approves nothing.
  const policy = await TelemetryPolicy.load(join(ROOT, "fixtures", "policies", "full.yaml"));
  const quiet = await replayRun(tools.source, { store: l.store, catalog: l.catalog, policy });
  const created = (await l.events(quiet.run.runId))[0]!;
  tally.add("a policy that approves a telemetry destination", {
    stopped: l.told() === before,
    recorded: created.data.policy_digest === TelemetryPolicy.denyAll().digest(),
  });
  console.log(tally.line());
});

Deno.test("a record that lacks an answer or a tool's result, or is forged, runs no tool and asks no provider", async () => {
  await using l = await lab();
  await countingTools(l.dir, { host: l.counter.host, token: "tools" });
  const run = await l.record(
    "count",
    HEAD + `agent:
  name: t
  backend: agent
  model: "test:"
  tools_folder: tools
  net: ["${l.counter.host}"]
  script: { turns: [{ tool_calls: [{ name: count, args: { n: 1 } }] }, { text: "counted" }] }
prompt: Count.
`,
  );
  const runs = l.store.runsRoot;
  const before = l.told();
  // 5. The record holds one answer fewer than the loop asks for.
  const short = await resealed(runs, run.outcome.runId, (events) => {
    const last = events.map((e) => e.type).lastIndexOf("model_called");
    // The run's recorded cost total counts the call taken out: a forger drops it too, so that the run verifies.
    const end = events.at(-1)!;
    if (end.data && typeof end.data === "object") delete (end.data as Record<string, unknown>).cost;
    return events.filter((_, i) => i !== last);
  });
  const shortReplay = await replayRun(await l.store.readRun(short), { store: l.store, catalog: l.catalog });
  tally.add("a record with fewer answers than the loop asks", {
    stopped: l.told() === before,
    recorded: shortReplay.run.error?.name === "ReplayDiverged" &&
      /the run made 1 model call,/.test(shortReplay.run.error.message),
  });
  // 6. The record asks for a tool call it never recorded as done.
  const undone = await resealed(
    runs,
    run.outcome.runId,
    (events) => events.filter((e) => e.type !== "tool_called"),
  );
  const undoneReplay = await replayRun(await l.store.readRun(undone), { store: l.store, catalog: l.catalog });
  tally.add("a call the record never recorded as done", {
    stopped: l.told() === before,
    recorded: undoneReplay.run.error?.name === "ReplayDiverged" &&
      /which the run did not record as done/.test(undoneReplay.run.error.message),
  });
  // 7. A forged record: a payload's bytes changed, so the run does not verify.
  const forged = await resealed(runs, run.outcome.runId, (events) => events);
  const reply = (await l.events(forged)).find((e) => e.type === "model_called")!.data
    .response_payload as string;
  await Deno.writeTextFile(join(runs, forged, "evidence", "payloads", reply), `{"content":[]}`);
  const refused = await replayRun(await l.store.readRun(forged), { store: l.store, catalog: l.catalog }).then(
    () => null,
    (e) => e,
  );
  tally.add("a forged record", {
    stopped: l.told() === before && refused instanceof RunNotReplayable,
    recorded: refused instanceof RunNotReplayable && /does not verify/.test(refused.message),
  });
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});

Deno.test("Deno's permission audit records an attempt to reach the network, so an audit without one proves none was made", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-audit-" });
  try {
    const audit = join(dir, "audit.jsonl");
    const script = join(dir, "reach.ts");
    // As the corpus's replays run: no net permission; the attempt is refused, and the audit holds it.
    await Deno.writeTextFile(script, `await fetch("http://127.0.0.1:4999/").catch(() => {});\n`);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", script],
      env: { DENO_AUDIT_PERMISSIONS: audit },
      stdout: "null",
      stderr: "null",
    }).output();
    assert.ok(out.success);
    const entries = (await Deno.readTextFile(audit)).trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(entries.some((e) => e.permission === "net"), JSON.stringify(entries));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a record swapped between its check and its serving is never served: the replay serves the events that verified", async () => {
  await using l = await lab();
  await countingTools(l.dir, { host: l.counter.host, token: "tools" });
  const run = await l.record(
    "count",
    HEAD + `agent:
  name: t
  backend: agent
  model: "test:"
  tools_folder: tools
  net: ["${l.counter.host}"]
  script: { turns: [{ tool_calls: [{ name: count, args: { n: 1 } }] }, { text: "counted" }] }
prompt: Count.
`,
  );
  // The swap: a record that verifies (one answer fewer, resealed), put in place once the check has read the
  // genuine one, as a writer racing the replay would.
  const short = await resealed(l.store.runsRoot, run.outcome.runId, (events) => {
    const last = events.map((e) => e.type).lastIndexOf("model_called");
    const end = events.at(-1)!;
    if (end.data && typeof end.data === "object") delete (end.data as Record<string, unknown>).cost;
    return events.filter((_, i) => i !== last);
  });
  const forged = await (await l.store.readRun(short)).eventsText();
  const genuine = await l.store.readRun(run.outcome.runId);
  let reads = 0;
  const swapped: RunRecord = {
    runId: genuine.runId,
    folder: genuine.folder,
    eventsText: () => reads++ === 0 ? genuine.eventsText() : Promise.resolve(forged),
    manifestText: () => genuine.manifestText(),
    payloadNames: () => genuine.payloadNames(),
    payloadInfo: (sha) => genuine.payloadInfo(sha),
    payloadPack: () => genuine.payloadPack(),
    payload: (sha) => genuine.payload(sha),
  };
  const before = l.told();
  const replay = await replayRun(swapped, { store: l.store, catalog: l.catalog });
  const served = !replay.run.error && replay.identical;
  tally.add("a record swapped between its check and its serving", {
    stopped: l.told() === before && served,
    recorded: served,
  });
  console.log(tally.line());
  assert.ok(served, `${replay.run.error?.message} ${JSON.stringify(replay.divergence)}`);
  assert.equal(l.told(), before);
});
