/**
 * The copy in MLflow against a real `mlflow server` (the peer of `.ci/peers/mlflow.sh`), read back through its
 * REST API and through MLflow's own Python client.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { z } from "zod";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import { formatMicros } from "../../../lib/provevi/evidence/event.ts";
import { utf8 } from "../../../lib/provevi/evidence/hash.ts";
import type { EvidenceStore } from "../../../lib/provevi/store/store.ts";
import { ProveviError, RunNotFound } from "../../../lib/provevi/evidence/errors.ts";
import { takeCopyLock } from "../../../lib/provevi/mlflow/copy_lock.ts";
import { copyRun } from "../../../lib/provevi/mlflow/copy_run.ts";
import { UNFINISHED_TAG } from "../../../lib/provevi/mlflow/copy_tags.ts";
import { MlflowClient } from "../../../lib/provevi/mlflow/mlflow_client.ts";
import { prove } from "../../../cli/prove.ts";
import { cleanEnv, taskRun } from "../../_children.ts";
import { mlflowPolicy, readBackProgram, storeWithRun } from "./_mlflow.ts";
import { mlflowPython, needMlflow } from "./_mlflow_peer.ts";
import { peerTest } from "../../_peers.ts";

type Span = { span_id: string; parent_id: string | null; name: string; attributes: Record<string, unknown> };
type ReadBack = {
  experiment_id: string;
  runs: {
    run_id: string;
    status: string;
    tags: Record<string, string>;
    params: Record<string, string>;
    metrics: Record<string, number>;
    inputs: { name: string; digest: string; source: string }[];
    traces: {
      trace_id: string;
      source_run: string;
      spans: Span[];
      assessments: {
        name: string;
        value: unknown;
        span_id: string | null;
        source_id: string;
        rationale: string;
      }[];
    }[];
  }[];
};

function unique(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

async function readBack(experiment: string, runId: string, trackingUri?: string): Promise<ReadBack> {
  return await mlflowPython(readBackProgram(experiment, runId), trackingUri ?? needMlflow().uri) as ReadBack;
}

peerTest("mlflow", {
  name: "copyRun() copies a run at usage into a tracking server, and MLflow's own client reads it back",
  async fn() {
    const { uri } = needMlflow();
    const agent = unique("analyst");
    await using t = await storeWithRun({ agent });
    const runId = t.runIds[0]!;
    const result = await copyRun(t.store, runId, mlflowPolicy("usage", uri), {
      environ: { MLFLOW_TRACKING_URI: uri },
    });
    assert.equal(result.experimentName, `acme/demo/dev/${agent}`);
    assert.equal(result.level, "usage");
    assert.deepEqual(result.deleted, []);
    const events = (await (await t.store.readRun(runId)).eventsText())!.trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    const traceId = events[0].trace_id as string;
    assert.equal(result.traceId, `tr-${traceId}`);

    const back = await readBack(result.experimentName, runId);
    assert.equal(back.runs.length, 1);
    const run = back.runs[0]!;
    assert.equal(run.run_id, result.mlflowRunId);
    assert.equal(run.status, "FINISHED");
    assert.equal(run.tags["provrun.run_id"], runId);
    assert.equal(run.tags["mlflow.runName"], runId);
    assert.equal(run.tags[UNFINISHED_TAG], undefined);
    assert.equal(run.params.model, "test:");
    assert.equal(run.params.spec, undefined, "the agent's spec is a body");
    assert.equal(run.metrics.input_tokens, 210);
    assert.equal(run.metrics.output_tokens, 51);
    assert.equal(run.metrics.model_calls, 4);
    assert.equal(run.metrics.tool_calls, 3);
    assert.equal(run.metrics.cost, 0, "the cost the run recorded: a test: model's calls cost nothing");
    assert.equal(run.inputs.length, 1);
    assert.equal(run.inputs[0]!.name, "revenue.csv");
    assert.match(run.inputs[0]!.digest, /^[0-9a-f]{32}$/);
    assert.deepEqual(Object.keys(JSON.parse(run.inputs[0]!.source)), ["sha256"]);

    assert.equal(run.traces.length, 1);
    const trace = run.traces[0]!;
    assert.equal(trace.trace_id, `tr-${traceId}`);
    assert.equal(trace.source_run, result.mlflowRunId);
    const root = trace.spans.find((s) => s.parent_id === null)!;
    assert.equal(root.span_id, events[0].span_id);
    assert.equal(root.name, `invoke_agent ${agent}`);
    // Each step is a span under the root span, with provrun's span IDs.
    const stepSpans = new Set(events.filter((e) => e.started_at !== null).map((e) => e.span_id));
    for (const id of stepSpans) assert.ok(trace.spans.some((s) => s.span_id === id), `span ${id} is copied`);
    const chats = trace.spans.filter((s) => s.name === "chat answer-1" || s.name.startsWith("chat"));
    assert.equal(chats.length, 4);
    assert.equal(chats[0]!.attributes["gen_ai.usage.input_tokens"], 30);
    assert.equal(chats[0]!.attributes["mlflow.spanInputs"], undefined, "a model's request is a body");
    const tools = trace.spans.filter((s) => s.name.startsWith("execute_tool "));
    assert.deepEqual(tools.map((s) => s.name).sort(), [
      "execute_tool note",
      "execute_tool read_file",
      "execute_tool write_file",
    ]);
  },
});

peerTest("mlflow", {
  name: "copyRun() at names keeps names only: no counts, no bodies, labels for parts that are not names",
  async fn() {
    const { uri } = needMlflow();
    // An agent named like a GitHub token and an input named like an AWS key: neither is a name.
    const marker = crypto.randomUUID().replaceAll("-", "").slice(0, 24);
    await using t = await storeWithRun({
      agent: `ghp_${marker}abcdefghijkl`,
      input: "AKIAABCDEFGHIJKLMNOP.csv",
    });
    const runId = t.runIds[0]!;
    const result = await copyRun(t.store, runId, mlflowPolicy("names", uri), {
      environ: { MLFLOW_TRACKING_URI: uri },
    });
    assert.equal(result.experimentName, "acme/demo/dev/agent");
    const back = await readBack("acme/demo/dev/agent", runId);
    const run = back.runs[0]!;
    assert.deepEqual(run.metrics, {});
    assert.equal(run.params.model, "test:");
    assert.equal(run.params.agent, undefined, "an agent named like a token is not a name");
    assert.equal(run.inputs[0]!.name, "input");
    const spans = run.traces[0]!.spans;
    assert.equal(spans.find((s) => s.parent_id === null)!.name, "invoke_agent");
    for (const span of spans) {
      for (const key of Object.keys(span.attributes)) {
        assert.ok(!key.startsWith("gen_ai.usage."), `${key} is a count`);
        assert.ok(
          !["mlflow.spanInputs", "mlflow.spanOutputs", "provrun.data"].includes(key),
          `${key} is a body`,
        );
      }
    }
    assert.ok(!JSON.stringify(back).includes(marker), "no part of the agent's name leaves below bodies");
    assert.ok(!JSON.stringify(back).includes("AKIA"), "nor of the input's");
  },
});

peerTest("mlflow", {
  name:
    "copyRun() at bodies adds the requests and replies, every setting, the input URIs and the events with no span",
  async fn() {
    const { uri } = needMlflow();
    const agent = unique("analyst");
    await using t = await storeWithRun({ agent });
    const runId = t.runIds[0]!;
    const result = await copyRun(t.store, runId, mlflowPolicy("bodies", uri), {
      environ: { MLFLOW_TRACKING_URI: uri },
    });
    const back = await readBack(result.experimentName, runId);
    const run = back.runs[0]!;
    assert.ok(run.params.spec!.includes("read_file"), "the agent's spec");
    assert.equal(JSON.parse(run.inputs[0]!.source).uri, "data://acme/demo/dev/finance/revenue.csv");
    const spans = run.traces[0]!.spans;
    const chat = spans.find((s) => s.name.startsWith("chat"))!;
    assert.ok(chat.attributes["mlflow.spanInputs"] !== undefined, "the model's request");
    assert.ok(chat.attributes["mlflow.spanOutputs"] !== undefined, "the model's reply");
    const read = spans.find((s) => s.name === "execute_tool read_file")!;
    assert.deepEqual(read.attributes["mlflow.spanInputs"], { path: "/input/revenue.csv" });
    // The root's input is the prompt and the run's settings as JSON, not the run file's YAML (whose # comments
    // MLflow's viewer rendered as headings).
    const root = spans.find((s) => s.parent_id === null)!;
    const input = root.attributes["mlflow.spanInputs"] as {
      prompt: string;
      settings: Record<string, unknown>;
    };
    assert.match(input.prompt, /^What was the revenue growth in Q3\?/);
    assert.equal(input.settings.agent, agent);
    assert.equal(input.settings.backend, "agent");
    // The digest is of the name and the source, so a copy at another level never shares a dataset row.
    const client = new MlflowClient(uri);
    const names = await copyRun(t.store, runId, mlflowPolicy("names", uri), {
      environ: { MLFLOW_TRACKING_URI: uri },
    });
    const again = await readBack(names.experimentName, runId);
    assert.notEqual(again.runs[0]!.inputs[0]!.digest, run.inputs[0]!.digest);
    assert.ok(client.url.startsWith("http"));
  },
});

peerTest("mlflow", {
  name: "a second copy deletes the first, with its trace, and writes it again",
  async fn() {
    const { uri } = needMlflow();
    await using t = await storeWithRun({ agent: unique("analyst") });
    const runId = t.runIds[0]!;
    const policy = mlflowPolicy("usage", uri);
    const first = await copyRun(t.store, runId, policy, { environ: { MLFLOW_TRACKING_URI: uri } });
    const second = await copyRun(t.store, runId, policy, { environ: { MLFLOW_TRACKING_URI: uri } });
    assert.notEqual(second.mlflowRunId, first.mlflowRunId);
    assert.deepEqual(second.deleted, [first.mlflowRunId]);
    assert.equal(second.traceId, first.traceId);
    const client = new MlflowClient(uri);
    const old = await client.call(
      "GET",
      "/api/2.0/mlflow/runs/get",
      { run_id: first.mlflowRunId },
      "get",
      z.object({ run: z.object({ info: z.object({ lifecycle_stage: z.string() }) }) }),
    );
    assert.equal(old.run.info.lifecycle_stage, "deleted");
    const back = await readBack(second.experimentName, runId);
    assert.deepEqual(back.runs.map((r) => r.run_id), [second.mlflowRunId]);
    assert.equal(back.runs[0]!.traces.length, 1);
    assert.equal(back.runs[0]!.traces[0]!.source_run, second.mlflowRunId);
  },
});

peerTest("mlflow", {
  name: "a killed copy leaves a run tagged provevi.copy.unfinished and a trace; the next copy deletes both",
  async fn() {
    const { uri } = needMlflow();
    await using t = await storeWithRun({ agent: unique("analyst") });
    const runId = t.runIds[0]!;
    const policy = mlflowPolicy("usage", uri);
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("./_paused_copy.ts", import.meta.url).pathname,
        t.storeUri,
        join(t.dir, "runs"),
        runId,
        JSON.stringify(policy.toJSON()),
        "linking the trace to the run",
      ],
      // The copy refuses the CA variables this machine may set; the child gets only what Deno needs.
      env: Object.fromEntries(
        Object.entries({
          MLFLOW_TRACKING_URI: uri,
          PATH: Deno.env.get("PATH"),
          HOME: Deno.env.get("HOME"),
          DENO_DIR: Deno.env.get("DENO_DIR"),
          XDG_CACHE_HOME: Deno.env.get("XDG_CACHE_HOME"),
        }).filter(([, v]) => v !== undefined),
      ) as Record<string, string>,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!out.includes("PAUSED")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
    const paused = out.includes("PAUSED");
    if (paused) child.kill("SIGKILL");
    await child.status;
    reader.releaseLock();
    await child.stdout.cancel().catch(() => {});
    const errors = await new Response(child.stderr).text();
    assert.ok(paused, `${out}\n${errors}`);

    const client = new MlflowClient(uri);
    const experiment = `acme/demo/dev/${(await readBackName(t.store, runId))}`;
    const experimentId = (await client.experimentId(experiment))!;
    const left = await client.searchRuns(experimentId, `tags."provrun.run_id" = '${runId}'`);
    assert.equal(left.length, 1);
    assert.ok(
      left[0]!.data?.tags?.some((tag) => tag.key === UNFINISHED_TAG),
      "the killed copy's run is unfinished",
    );

    const result = await copyRun(t.store, runId, policy, { environ: { MLFLOW_TRACKING_URI: uri } });
    assert.deepEqual(result.deleted, [left[0]!.info.run_id]);
    const back = await readBack(experiment, runId);
    assert.deepEqual(back.runs.map((r) => r.run_id), [result.mlflowRunId]);
    assert.equal(back.runs[0]!.tags[UNFINISHED_TAG], undefined);
    assert.equal(back.runs[0]!.traces.length, 1);
  },
});

async function readBackName(store: EvidenceStore, runId: string): Promise<string> {
  const first = JSON.parse((await (await store.readRun(runId)).eventsText())!.split("\n")[0]!);
  return first.data.agent as string;
}

peerTest("mlflow", {
  name: "copyRun() refuses a copy while a proxy, TLS or auth variable is set, and writes nothing",
  async fn() {
    const { uri } = needMlflow();
    const agent = unique("analyst");
    await using t = await storeWithRun({ agent });
    for (const name of ["HTTPS_PROXY", "http_proxy", "REQUESTS_CA_BUNDLE", "MLFLOW_TRACKING_AUTH"]) {
      await assert.rejects(
        copyRun(t.store, t.runIds[0]!, mlflowPolicy("usage", uri), {
          environ: { MLFLOW_TRACKING_URI: uri, [name]: "http://proxy.example:3128" },
        }),
        (e: unknown) => e instanceof ProveviError && e.message.includes(name),
      );
    }
    assert.equal(await new MlflowClient(uri).experimentId(`acme/demo/dev/${agent}`), null);
  },
});

peerTest("mlflow", {
  name:
    "copyRun() refuses a place the policy does not approve, and prove mlflow exits 1 with the seed's line",
  async fn() {
    const { uri } = needMlflow();
    await using t = await storeWithRun({ agent: unique("analyst") });
    const runId = t.runIds[0]!;
    await assert.rejects(
      copyRun(t.store, runId, mlflowPolicy("usage", uri), {
        environ: { MLFLOW_TRACKING_URI: "https://mlflow.example.com" },
      }),
      {
        message:
          "the telemetry policy approves no mlflow destination for MLFLOW_TRACKING_URI https://mlflow.example.com:443",
      },
    );
    await assert.rejects(
      copyRun(t.store, runId, mlflowPolicy("usage", uri), { environ: {} }),
      {
        message:
          "the telemetry policy approves no mlflow destination for the store's own file (MLFLOW_TRACKING_URI is unset)",
      },
    );
    const lines: string[] = [];
    const io = {
      out: (l: string) => lines.push(l),
      err: (l: string) => lines.push(l),
      terminal: false,
      progress() {},
    };
    const saved = Deno.env.get("MLFLOW_TRACKING_URI");
    Deno.env.delete("MLFLOW_TRACKING_URI");
    try {
      const code = await prove(["--store", t.storeUri, "--runs", join(t.dir, "runs"), "mlflow", runId], io);
      assert.equal(code, 1);
      assert.deepEqual(lines, [
        "prove: the telemetry policy approves no mlflow destination for the store's own file (MLFLOW_TRACKING_URI is unset)",
      ]);
    } finally {
      if (saved !== undefined) Deno.env.set("MLFLOW_TRACKING_URI", saved);
    }
  },
});

peerTest("mlflow", {
  name: "copyRun() refuses a run that does not verify, and a run ID that is not one",
  async fn() {
    const { uri } = needMlflow();
    await using t = await storeWithRun({ agent: unique("analyst") });
    const runId = t.runIds[0]!;
    const file = join(t.dir, "runs", runId, "evidence", "events.jsonl");
    await Deno.chmod(file, 0o644);
    const text = await Deno.readTextFile(file);
    await Deno.writeTextFile(file, text.replace('"input_tokens":30', '"input_tokens":3'));
    await assert.rejects(
      copyRun(t.store, runId, mlflowPolicy("usage", uri), { environ: { MLFLOW_TRACKING_URI: uri } }),
      (e: unknown) => e instanceof ProveviError && /does not verify/.test(e.message),
    );
    await assert.rejects(
      copyRun(t.store, "run-x' or 1=1", mlflowPolicy("usage", uri), {
        environ: { MLFLOW_TRACKING_URI: uri },
      }),
      RunNotFound,
    );
  },
});

peerTest("mlflow", {
  name: "copyRun() puts the store's assessments on the trace, cut by level",
  async fn() {
    const { uri } = needMlflow();
    await using t = await storeWithRun({ agent: unique("analyst") });
    const runId = t.runIds[0]!;
    const events = (await (await t.store.readRun(runId)).eventsText())!.trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    const chat = events.find((e) => e.type === "model_called")!;
    const store = t.store as EvidenceStore & {
      assess(target: unknown, name: string, value: unknown, o?: unknown): Promise<unknown>;
    };
    await store.assess(runId, "correct", true, { source: "ada@example.com", rationale: "matches the CSV" });
    await store.assess(runId, "score", 0.8, { source: "a judge with spaces" });
    await store.assess({ run: runId, span: chat.span_id }, "tone", "neutral");
    await store.assess(runId, "what a reviewer thought", "fine");

    const names = await copyRun(t.store, runId, mlflowPolicy("names", uri), {
      environ: { MLFLOW_TRACKING_URI: uri },
    });
    let back = await readBack(names.experimentName, runId);
    let got = back.runs[0]!.traces[0]!.assessments.sort((a, b) => a.name < b.name ? -1 : 1);
    assert.deepEqual(got.map((a) => [a.name, a.value, a.span_id, a.source_id, a.rationale]), [
      ["correct", true, null, "ada@example.com", null],
      ["tone", "neutral", chat.span_id, "provevi", null],
    ]);

    const usage = await copyRun(t.store, runId, mlflowPolicy("usage", uri), {
      environ: { MLFLOW_TRACKING_URI: uri },
    });
    back = await readBack(usage.experimentName, runId);
    got = back.runs[0]!.traces[0]!.assessments.sort((a, b) => a.name < b.name ? -1 : 1);
    assert.deepEqual(got.map((a) => [a.name, a.value, a.source_id]), [
      ["correct", true, "ada@example.com"],
      ["score", 0.8, "provevi"],
      ["tone", "neutral", "provevi"],
    ]);

    const bodies = await copyRun(t.store, runId, mlflowPolicy("bodies", uri), {
      environ: { MLFLOW_TRACKING_URI: uri },
    });
    back = await readBack(bodies.experimentName, runId);
    got = back.runs[0]!.traces[0]!.assessments.sort((a, b) => a.name < b.name ? -1 : 1);
    assert.equal(got.length, 4);
    assert.equal(got.find((a) => a.name === "correct")!.rationale, "matches the CSV");
    assert.equal(got.find((a) => a.name === "score")!.source_id, "a judge with spaces");
  },
});

/** Writes a sealed run with one span of a library (`span_recorded`), as provrun writes an approved one. */
async function writeLibraryRun(store: EvidenceStore, agent: string): Promise<string> {
  const runId = `run-20261130T120000Z-${crypto.randomUUID().slice(0, 8)}`;
  const writer = await store.openRun(runId);
  const chain = new EventChain(runId);
  let clock = Date.UTC(2026, 10, 30, 12, 0, 0) * 1000;
  const trace = crypto.randomUUID().replaceAll("-", ""), root = "1".repeat(16), span = "2".repeat(16);
  const add = async (init: Parameters<EventChain["next"]>[0]) => {
    clock += 1000;
    const next = chain.next({ time: formatMicros(clock), trace_id: trace, span_id: root, ...init });
    await writer.append(next.line, next.event);
    chain.accept(next);
  };
  await add({
    type: "run_created",
    component: "RunContext",
    actor: "ada",
    refs: [`run://acme/demo/dev/${runId}`],
    data: { org: "acme", domain: "demo", env: "dev", agent, model: "gpt-4o", backend: "agent" },
  });
  const body = await writer.putPayload(
    utf8(JSON.stringify({ attributes: { "gen_ai.input.messages": "[secret prompt]" }, events: [] })),
  );
  await add({
    type: "span_recorded",
    component: "RunContext",
    actor: "ada",
    confidence: "parsed",
    span_id: span,
    parent_span_id: root,
    started_at: formatMicros(clock + 100),
    payload: body,
    data: {
      name: "chat gpt-4o",
      scope: "ai",
      library: "ai",
      version: "7.0.173",
      kind: 2,
      end_time: formatMicros(clock + 500),
      status: { code: 0, message: null },
      attributes: { "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 11 },
    },
  });
  await add({ type: "run_completed", component: "RunContext", actor: "ada", data: { status: "completed" } });
  await writer.seal();
  return runId;
}

peerTest("mlflow", {
  name:
    "a library's span (span_recorded) is copied only where the policy lets that library feed the destination",
  async fn() {
    const { uri } = needMlflow();
    await using t = await storeWithRun({ agent: unique("analyst"), runs: 0 });
    const agent = unique("library");
    const runId = await writeLibraryRun(t.store, agent);
    const libraries = { libraries: { ai: { versions: ">=7 <8", telemetry: ["tracking"] } } };
    const fed = await copyRun(t.store, runId, mlflowPolicy("usage", uri, libraries), {
      environ: { MLFLOW_TRACKING_URI: uri },
    });
    assert.equal(fed.spans, 2);
    let back = await readBack(fed.experimentName, runId);
    const span = back.runs[0]!.traces[0]!.spans.find((s) => s.span_id === "2".repeat(16))!;
    assert.equal(span.name, "chat gpt-4o");
    assert.equal(span.attributes["gen_ai.usage.input_tokens"], 11);
    assert.equal(span.attributes["gen_ai.input.messages"], undefined, "a body below bodies");

    const bodies = await copyRun(t.store, runId, mlflowPolicy("bodies", uri, libraries), {
      environ: { MLFLOW_TRACKING_URI: uri },
    });
    back = await readBack(bodies.experimentName, runId);
    const full = back.runs[0]!.traces[0]!.spans.find((s) => s.span_id === "2".repeat(16))!;
    assert.ok(String(full.attributes["gen_ai.input.messages"]).includes("secret prompt"));

    const notFed = await copyRun(t.store, runId, mlflowPolicy("bodies", uri), {
      environ: { MLFLOW_TRACKING_URI: uri },
    });
    assert.equal(notFed.spans, 1);
    back = await readBack(notFed.experimentName, runId);
    assert.deepEqual(back.runs[0]!.traces[0]!.spans.map((s) => s.span_id), ["1".repeat(16)]);
  },
});

peerTest("mlflow", {
  name: "one copy at a time per store: a copy waits for the lock, then gives up with a clear line",
  async fn() {
    const { uri } = needMlflow();
    await using t = await storeWithRun({ agent: unique("analyst") });
    using _held = await takeCopyLock(t.store);
    await assert.rejects(
      copyRun(t.store, t.runIds[0]!, mlflowPolicy("usage", uri), {
        environ: { MLFLOW_TRACKING_URI: uri },
        lockWait: 300,
      }),
      /another copy into MLflow from this store holds the lock .*mlflow-copy\.lock/,
    );
  },
});

peerTest("mlflow", {
  name: "an unreachable tracking server is one line that says so",
  async fn() {
    await using t = await storeWithRun({ agent: unique("analyst") });
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    const url = `http://127.0.0.1:${port}`;
    await assert.rejects(
      copyRun(t.store, t.runIds[0]!, mlflowPolicy("usage", url), {
        environ: {
          MLFLOW_TRACKING_URI: url,
          MLFLOW_TRACKING_PASSWORD: "hunter2",
          MLFLOW_TRACKING_USERNAME: "ada",
        },
      }),
      (e: unknown) =>
        e instanceof ProveviError && e.message.startsWith(`cannot reach MLflow at ${url}`) &&
        !e.message.includes("\n") && !e.message.includes("hunter2"),
    );
  },
});

peerTest("mlflow", {
  name: "prove mlflow copies a run and prints the seed's lines; a second copy names the copy it deleted",
  async fn() {
    const { uri } = needMlflow();
    await using t = await storeWithRun({ agent: unique("analyst") });
    const runId = t.runIds[0]!;
    const policyFile = join(t.dir, "policy.yaml");
    await Deno.writeTextFile(
      policyFile,
      `version: 1\ndestinations:\n  tracking: { kind: mlflow, receives: usage, endpoint: "${uri}" }\nhosts: [127.0.0.1]\n`,
    );
    // The copy reads the process's variables (MLFLOW_TRACKING_URI; this machine's CA variables would refuse
    // it). They are given to a child `prove` (the task's own flags), never set in this process, whose other
    // test files start children of their own at the same time.
    {
      const copy = async () => {
        const args = [
          "--store",
          t.storeUri,
          "--runs",
          join(t.dir, "runs"),
          "mlflow",
          runId,
          "--policy",
          policyFile,
        ];
        const out = await new Deno.Command(Deno.execPath(), {
          args: [...taskRun("prove"), ...args],
          clearEnv: true,
          env: { ...cleanEnv(), MLFLOW_TRACKING_URI: uri },
          stdin: "null",
        }).output();
        const text = (b: Uint8Array) => new TextDecoder().decode(b).split("\n").filter((l) => l !== "");
        return { code: out.code, lines: [...text(out.stdout), ...text(out.stderr)] };
      };
      const first = await copy();
      assert.equal(first.code, 0, first.lines.join("\n"));
      assert.equal(first.lines.length, 2);
      assert.equal(first.lines[0], `${runId}: copied to MLflow at ${uri}, destination tracking, level usage`);
      const made = /^ {2}experiment \d+, MLflow run ([0-9a-f]{32}), trace tr-[0-9a-f]{32} with \d+ spans$/
        .exec(
          first.lines[1]!,
        );
      assert.ok(made, first.lines[1]);
      const second = await copy();
      assert.equal(second.code, 0, second.lines.join("\n"));
      assert.equal(second.lines[2], `  deleted the earlier copy, MLflow run ${made[1]}`);
    }
  },
});
