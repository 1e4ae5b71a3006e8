import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { provr } from "../../cli/provr.ts";
import { OtlpReceiver } from "../../lib/provevi/receiver/otlp_receiver.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { taskFlags } from "../_children.ts";

const GOOD = `run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: q
  backend: call
  model: "test:"
  script: { turns: [{ text: "forty-two" }] }
prompt: What is the answer?
`;

async function setup(runText: string, policy: string) {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(join(dir, "run.yaml"), runText);
  await Deno.writeTextFile(join(dir, "policy.yaml"), policy);
  return { dir, run: join(dir, "run.yaml"), policy: join(dir, "policy.yaml"), runs: join(dir, "runs") };
}

/** `deno task provr` as deno.json writes it, with its --allow-net replaced. */
async function provrTask(args: string[], options: { allowNet: string; env: Record<string, string> }) {
  const flags = taskFlags("provr");
  const net = flags.indexOf("--allow-net");
  assert.ok(net > 0, "the provr task has an open --allow-net");
  flags[net] = options.allowNet;
  const words = ["run", "-q", ...flags, "cli/provr.ts"];
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...words, ...args],
    env: options.env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b).trim();
  return { code: out.code, out: text(out.stdout), err: text(out.stderr) };
}

async function events(runs: string, runId: string) {
  return readEventsText(await Deno.readTextFile(join(runs, runId, "evidence", "events.jsonl"))).events;
}

Deno.test("provr run --policy refuses a run file whose telemetry section widens the policy, in one line", async () => {
  const t = await setup(
    GOOD + "telemetry:\n  hosts: [evil.example]\n",
    "version: 1\nhosts: [otel.example.com]\n",
  );
  const io = bufferIo();
  const code = await provr(["--runs", t.runs, "run", t.run, "--policy", t.policy], io);
  assert.equal(code, 1);
  const err = io.stderr.join("\n");
  assert.equal(err.split("\n").length, 1);
  assert.match(err, /^provr: the run file's telemetry section has 1 problem: .*evil\.example/);
  await assert.rejects(() => Deno.stat(t.runs));
  await Deno.remove(t.dir, { recursive: true });
});

Deno.test("provr (task flags): an unlisted OTLP host that --allow-net leaves out is blocked, not refused", async () => {
  const t = await setup(GOOD, "version: 1\n");
  const r = await provrTask(["--runs", t.runs, "run", t.run, "--policy", t.policy], {
    allowNet: "--allow-net=127.0.0.1",
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel.unlisted.example:4318", OTEL_DENO: "1" },
  });
  assert.equal(r.code, 0, r.err);
  const all = await events(t.runs, r.out);
  const blocked = all.filter((e) => e.type === "telemetry_blocked");
  assert.deepEqual(blocked.map((e) => e.data), [{
    path: "destination",
    library: null,
    detail: "OTEL_EXPORTER_OTLP_ENDPOINT http://otel.unlisted.example:4318/v1/traces",
  }]);
  // the narrow --allow-env=OTEL_* lets the run read the variables one by one
  assert.deepEqual(all[0]!.data.telemetry_variables, ["OTEL_DENO", "OTEL_EXPORTER_OTLP_ENDPOINT"]);
  assert.deepEqual(all[0]!.data.unreadable_variables, []);
  assert.equal(all.filter((e) => e.type === "telemetry_problem").length, 1);
  await Deno.remove(t.dir, { recursive: true });
});

Deno.test("provr (task flags): an unlisted OTLP host that --allow-net opens refuses the run, naming the host", async () => {
  const t = await setup(GOOD, "version: 1\n");
  const r = await provrTask(["--runs", t.runs, "run", t.run, "--policy", t.policy], {
    allowNet: "--allow-net",
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel.unlisted.example:4318" },
  });
  assert.equal(r.code, 1);
  assert.match(
    r.err,
    /^provr: cannot start the run: OTEL_EXPORTER_OTLP_ENDPOINT names otel\.unlisted\.example:4318, which the telemetry policy's hosts do not list/,
  );
  await assert.rejects(() => Deno.stat(join(t.runs)));
  await Deno.remove(t.dir, { recursive: true });
});

Deno.test("provr (task flags): an approved destination receives the run's spans over OTLP/HTTP protobuf", async () => {
  await using receiver = await OtlpReceiver.start();
  const t = await setup(
    GOOD,
    `version: 1
destinations:
  collector: { kind: otlp, receives: usage, endpoint: "${receiver.tracesUrl}" }
hosts: [127.0.0.1]
`,
  );
  const r = await provrTask(["--runs", t.runs, "run", t.run], {
    allowNet: `--allow-net=127.0.0.1:${receiver.port}`,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, PROVRUN_TELEMETRY_POLICY: t.policy },
  });
  assert.equal(r.code, 0, r.err);
  const all = await events(t.runs, r.out);
  assert.deepEqual(all.filter((e) => e.type.startsWith("telemetry_")), []);
  const ids = new Set(all.map((e) => e.span_id));
  assert.deepEqual(new Set(receiver.spans.map((s) => s.spanId)), ids);
  assert.ok(receiver.spans.every((s) => s.attributes["provrun.run_id"] === r.out));
  await Deno.remove(t.dir, { recursive: true });
});
