import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { exportTrace, type TraceProvenance } from "../../../lib/provtrace/export/export.ts";
import { writeTraceExport } from "../../../lib/provtrace/export/export_file.ts";
import { TRACE_EXPORT_FORMATS, type TraceExportFormat } from "../../../lib/provtrace/export/formats.ts";
import { PROVENANCE_PLACE } from "../../../lib/provtrace/export/formats.ts";
import { bufferIo } from "../../../cli/_io.ts";
import { provtrace } from "../../../cli/provtrace.ts";
import { builtRuns, ownBuiltRuns } from "../_runs.ts";
import { peerTest } from "../../_peers.ts";

const PYTHON = Deno.env.get("PROVTRACE_TEST_TRAINING_PYTHON");
const CHECKER = new URL("./check_training.py", import.meta.url).pathname;
const SCHEMA = new URL("../../../fixtures/atif/atif-v1.7.schema.json", import.meta.url).pathname;

type Json = { [key: string]: unknown };

/** An export file's lines and each line's provenance, read from where its format keeps it. */
async function readExport(path: string, format: TraceExportFormat) {
  const lines = (await Deno.readTextFile(path)).trimEnd().split("\n").map((l) => JSON.parse(l) as Json);
  const place = PROVENANCE_PLACE[format];
  const provenance = place === "side file"
    ? (await Deno.readTextFile(`${path}.provenance.jsonl`)).trimEnd().split("\n").map((l) => JSON.parse(l))
    : lines.map((l) => place === "extra" ? (l.extra as Json).provenance : l.provenance);
  return { lines, provenance: provenance as (TraceProvenance & { subagents?: TraceProvenance[] })[] };
}

Deno.test("every format's file keeps each line's provenance, and each event hash recomputes from the run folder", async () => {
  await using own = await ownBuiltRuns();
  const { t, db, dir } = own;
  for (const format of TRACE_EXPORT_FORMATS) {
    const file = join(dir, `${format}.jsonl`);
    const written = await writeTraceExport(db, {
      runs: t.runs,
      kind: format,
      out: file,
      catalog: t.catalog,
    });
    const { lines, provenance } = await readExport(file, format);
    assert.equal(lines.length, written.manifest.lines, format);
    assert.equal(provenance.length, lines.length, `${format}: one provenance per line`);
    assert.equal(lines.length, format === "atif" ? 2 : 6, format);
    if (format === "openai") {
      assert.equal("provenance" in lines[0]!, false, "openai lines hold only OpenAI's keys");
    }
    // The manifest: the export's SHA-256 is the file's, and it names every run and event the lines hold.
    const bytes = await Deno.readFile(file);
    assert.equal(written.manifest.export_id, createHash("sha256").update(bytes).digest("hex"));
    const manifest = JSON.parse(await Deno.readTextFile(`${file}.manifest.json`));
    assert.deepEqual(manifest, JSON.parse(JSON.stringify(written.manifest)));
    assert.deepEqual(
      manifest.runs.map((r: { run_id: string }) => r.run_id).sort(),
      [t.agentRun, t.callRun].sort(),
    );
    for (const p of provenance) {
      const events = readEventsText(
        await Deno.readTextFile(join(t.runs, p.run_id, "evidence", "events.jsonl")),
      );
      assert.ok(p.events.length >= 1, `${format}: a line holds at least its model call`);
      for (const e of p.events) {
        assert.equal(sha256Hex(events.lines[e.seq]!), e.line_hash, `${format} ${p.run_id} seq ${e.seq}`);
      }
      const types = p.events.map((e) => events.events[e.seq]!.type);
      assert.ok(types.every((type) => type === "model_called" || type === "tool_called"), types.join());
      assert.equal(p.verified, true);
      assert.equal(p.policy, null);
    }
  }
});

Deno.test("the formats: OpenAI weights, ShareGPT's turns, apply_chat_template's arguments, ATIF against its schema", async () => {
  const { t, db } = await builtRuns();
  const of = async (kind: TraceExportFormat, per: "call" | "run" = "call") =>
    (await exportTrace(db, { runs: t.runs, kind, per, catalog: t.catalog, agent: "analyst" }))
      .lines as Json[];
  // OpenAI: a line per call trains on its own reply alone; a line per run on every reply.
  const perCall = await of("openai");
  const third = perCall[2]!.messages as { role: string; weight?: number; tool_calls?: unknown[] }[];
  assert.deepEqual(third.filter((m) => m.role === "assistant").map((m) => m.weight), [0, 0, 1]);
  const perRun = (await of("openai", "run"))[0]!.messages as { role: string; weight?: number }[];
  assert.ok(perRun.filter((m) => m.role === "assistant").every((m) => m.weight === 1));
  assert.equal(perCall[0]!.parallel_tool_calls, false);
  // ShareGPT: human, then function_call and observation in turn, and the final answer from gpt.
  const share = (await of("sharegpt", "run"))[0]!;
  const turns = share.conversations as { from: string; value: string }[];
  assert.deepEqual(turns.map((x) => x.from), [
    "human",
    "function_call",
    "observation",
    "function_call",
    "observation",
    "function_call",
    "observation",
    "function_call",
    "observation",
    "gpt",
  ]);
  assert.deepEqual(JSON.parse(turns[3]!.value), {
    name: "read_file",
    arguments: { path: "/input/revenue.csv" },
  });
  assert.equal(typeof share.tools, "string");
  // The third reply asked two tools (one the provider ran): their results are one observation, a list.
  assert.equal(JSON.parse(turns[6]!.value).length, 2);
  // hf: arguments as objects, tool messages with their call's ID.
  const hf = (await of("hf", "run"))[0]!.messages as {
    role: string;
    tool_calls?: { function: { arguments: unknown } }[];
  }[];
  assert.deepEqual(hf.find((m) => m.tool_calls)!.tool_calls![0]!.function.arguments, { path: "/input" });
  // ATIF: valid against the vendored v1.7 schema, with metrics per agent step.
  const atif = await of("atif");
  assert.equal(atif.length, 1);
  const { provenance, ...trajectory } = atif[0]!;
  const validate = new Ajv2020({ strict: false }).compile(JSON.parse(await Deno.readTextFile(SCHEMA)));
  const withExtra = { ...trajectory, extra: { provenance } };
  assert.ok(validate(withExtra), JSON.stringify(validate.errors));
  const steps = trajectory.steps as { source: string; metrics?: { prompt_tokens: number } }[];
  assert.deepEqual(steps.map((s) => s.source), ["user", "agent", "agent", "agent", "agent", "agent"]);
  assert.deepEqual(steps.filter((s) => s.metrics).map((s) => s.metrics!.prompt_tokens), [
    30,
    50,
    70,
    90,
    110,
  ]);
  assert.equal(trajectory.trajectory_id, t.agentRun);
});

Deno.test("an export names the policy that let it out, and refuses a destination that may not receive bodies", async () => {
  const { t, db } = await builtRuns();
  const policy = TelemetryPolicy.fromDict({
    version: 1,
    libraries: {},
    hosts: ["train.example.com", "dash.example.com"],
    destinations: {
      trainer: { kind: "otlp", receives: "bodies", endpoint: "https://train.example.com/v1/traces" },
      dashboard: { kind: "otlp", receives: "usage", endpoint: "https://dash.example.com/v1/traces" },
    },
  });
  const { lines } = await exportTrace(db, {
    runs: t.runs,
    kind: "hf",
    policy,
    destination: "trainer",
    catalog: t.catalog,
  });
  assert.deepEqual(lines[0]!.provenance.policy, {
    digest: policy.digest(),
    destination: "trainer",
    level: "bodies",
  });
  await assert.rejects(
    exportTrace(db, { runs: t.runs, kind: "hf", policy, destination: "dashboard", catalog: t.catalog }),
    /lets destination "dashboard" receive usage only, and a training export holds message bodies/,
  );
  await assert.rejects(
    exportTrace(db, { runs: t.runs, kind: "hf", policy, destination: "nowhere", catalog: t.catalog }),
    /names no destination "nowhere"/,
  );
});

Deno.test("provtrace export --format: --out writes the lines, the manifest and openai's side file; a wrong choice is exit 2", async () => {
  await using own = await ownBuiltRuns();
  const { t, db, dir } = own;
  const config = join(dir, "provcat.yaml");
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      cache: join(dir, "cache"),
      stores: { lake: { type: "git", path: join(t.root, "lake") } },
      routes: [{ prefix: "data://acme/demo/dev", store: "lake" }, {
        prefix: "run://acme/demo/dev",
        store: "lake",
        path: "runs",
      }],
    }),
  );
  let io = bufferIo();
  const out = join(dir, "train.jsonl");
  const args = ["export", "--db", db, "--runs", t.runs];
  assert.equal(await provtrace([...args, "--format", "openai"], io), 1);
  assert.match(
    io.stderr[0]!,
    /--format openai keeps each line's provenance in a side file .*: give --out FILE/,
  );
  io = bufferIo();
  assert.equal(await provtrace([...args, "--format", "jsonl"], io), 2);
  assert.match(io.stderr[0]!, /--format jsonl is not an export: use steps, sft, openai, sharegpt, hf, atif/);
  io = bufferIo();
  assert.equal(await provtrace([...args, "--format", "hf", "--tokens"], io), 2);
  assert.match(io.stderr[0]!, /--tokens goes with --format steps/);
  io = bufferIo();
  const code = await provtrace([...args, "--format", "openai", "--out", out, "--config", config], io);
  assert.equal(code, 0, io.stderr.join("\n"));
  assert.match(
    io.stderr.at(-1)!,
    /^provtrace: 6 openai lines to .*train\.jsonl \(export [0-9a-f]{12}…, 2 runs; manifest/,
  );
  for (const side of [`${out}.manifest.json`, `${out}.provenance.jsonl`]) {
    assert.ok((await Deno.stat(side)).isFile);
  }
  io = bufferIo();
  assert.equal(await provtrace([...args, "--kind", "sft", "--config", config], io), 0, io.stderr.join("\n"));
  assert.equal(io.stdout.join("\n").split("\n").length, 6, "the lines go to standard output without --out");
});

peerTest("training", {
  name:
    "the trainers' own readers take every format: OpenAI's rules, apply_chat_template, datasets, the ATIF schema",
  fn: async () => {
    if (!PYTHON) {
      throw new Error("PROVTRACE_TEST_TRAINING_PYTHON is unset: .ci/peers/training.sh did not run");
    }
    await using own = await ownBuiltRuns();
    const { t, db, dir } = own;
    for (const format of ["openai", "hf", "sharegpt", "atif"] as const) {
      for (const per of ["call", "run"] as const) {
        const file = join(dir, `${format}-${per}.jsonl`);
        await writeTraceExport(db, { runs: t.runs, kind: format, per, out: file, catalog: t.catalog });
        const out = await new Deno.Command(PYTHON, {
          args: [CHECKER, format, file, ...(format === "atif" ? [SCHEMA] : [])],
          stdout: "piped",
          stderr: "piped",
        }).output();
        const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
        assert.equal(out.code, 0, `${format} per ${per}: ${text}`);
        assert.match(text, new RegExp(`${format}: \\d+ lines, 0 with problems`));
      }
    }
  },
});
