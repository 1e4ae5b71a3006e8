import { deepEqual, equal, ok } from "node:assert/strict";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import type { Json } from "../../lib/provevi/evidence/event.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/policy.ts";
import { blockedData, problemData } from "../../lib/provevi/telemetry/telemetry_events.ts";

const FIXTURES = "fixtures/policies/";

Deno.test("prove policy prints the digest, each library, each destination and the hosts", async () => {
  const io = bufferIo();
  const file = FIXTURES + "telemetry-policy.yaml";
  equal(await prove(["policy", file], io), 0);
  const digest = (await TelemetryPolicy.load(file)).digest();
  deepEqual(io.stdout, [
    `${file}: sha256 ${digest}`,
    "  library @ai-sdk/openai 4.0.118 feeds nothing",
    "  library ai >=7.0.0 <7.1.0 feeds logfire",
    "  destination logfire (logfire) receives usage at https://logfire-us.pydantic.dev",
    "  hosts: api.anthropic.com, .amazonaws.com, logfire-us.pydantic.dev",
  ]);
  deepEqual(io.stderr, []);
});

Deno.test("prove policy shows every kind of destination", async () => {
  const io = bufferIo();
  equal(await prove(["policy", FIXTURES + "full.yaml"], io), 0);
  ok(io.stdout.includes("  library ai >=7.0.0 <8.0.0 feeds collector, tracking"));
  ok(io.stdout.includes("  destination browser (live) receives bodies"));
  ok(io.stdout.includes("  destination store (mlflow) receives names at the store's own file"));
  ok(io.stdout.includes(
    "  destination tracking (mlflow) receives bodies at postgresql://db.example.com/mlflow?sslmode=require",
  ));
});

Deno.test("prove policy exits 1 when an approved library is installed at a version the policy does not name", async () => {
  const io = bufferIo();
  equal(await prove(["policy", FIXTURES + "newer-ai.yaml"], io), 1);
  deepEqual(io.stderr, ["prove: ai 7.0.173 is installed, but the policy approves >=7.1"]);
});

Deno.test("prove policy reads the installed versions from the deno.json that --config names", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify({ imports: { ai: "npm:ai@7.1.2" } }));
    const io = bufferIo();
    equal(await prove(["policy", FIXTURES + "newer-ai.yaml", "--config", `${dir}/deno.json`], io), 0);
    deepEqual(io.stderr, []);
    // A --config that cannot be read is refused: the installed versions could not be checked.
    const none = bufferIo();
    equal(await prove(["policy", FIXTURES + "newer-ai.yaml", "--config", `${dir}/missing.json`], none), 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("prove policy exits 1 with every problem of a policy that cannot be read", async () => {
  const io = bufferIo();
  equal(await prove(["policy", FIXTURES + "many-problems.yaml"], io), 1);
  equal(io.stderr.length, 1);
  ok(io.stderr[0]!.startsWith(`prove: the telemetry policy ${FIXTURES}many-problems.yaml has 13 problems: `));
  const missing = bufferIo();
  equal(await prove(["policy", FIXTURES + "no-such.yaml"], missing), 1);
  ok(missing.stderr[0]!.startsWith("prove: cannot read the telemetry policy"));
});

Deno.test("prove policy --json prints the policy, its digest and the version problems", async () => {
  const io = bufferIo();
  equal(await prove(["policy", FIXTURES + "newer-ai.yaml", "--json"], io), 1);
  const out = JSON.parse(io.text());
  equal(out.sha256.length, 64);
  deepEqual(out.problems, [{
    code: "policy.version_unapproved",
    file: FIXTURES + "newer-ai.yaml",
    line: null,
    seq: null,
    message: "ai 7.0.173 is installed, but the policy approves >=7.1",
  }]);
  deepEqual(out.policy.hosts, ["otel.example.com"]);
});

Deno.test("prove policy --json prints each problem of a policy that cannot be read, with its code", async () => {
  const io = bufferIo();
  equal(await prove(["policy", FIXTURES + "many-problems.yaml", "--json"], io), 1);
  const out = JSON.parse(io.text());
  equal(out.sha256, null);
  equal(out.problems.length, 13);
  ok(
    out.problems.every((p: { code: string; file: string }) =>
      p.code.startsWith("policy.") && p.file === FIXTURES + "many-problems.yaml"
    ),
  );
  deepEqual(out.problems[1], {
    code: "policy.version",
    file: FIXTURES + "many-problems.yaml",
    line: null,
    seq: null,
    message: "version: 2 is not the integer 1; write version: 1",
  });
  ok(io.stderr[0]!.startsWith(`prove: the telemetry policy ${FIXTURES}many-problems.yaml has 13 problems: `));
});

/** Writes a sealed run with the given events after run_created. */
async function writeRun(
  runs: string,
  runId: string,
  events: [string, { [key: string]: Json }][],
): Promise<void> {
  const store = new FileStore({ runs });
  const writer = await store.openRun(runId);
  const chain = new EventChain(runId);
  const all: [string, { [key: string]: Json }][] = [["run_created", {}], ...events, ["run_completed", {}]];
  for (const [type, data] of all) {
    const c = chain.next({
      type,
      component: "Telemetry",
      actor: "me",
      data,
      time: "2026-11-29T12:00:00.000000Z",
    });
    await writer.append(c.line, c.event);
    chain.accept(c);
  }
  await writer.seal();
}

Deno.test("prove telemetry prints the blocked attempts and the problems of a run, one on each line", async () => {
  const runs = await Deno.makeTempDir();
  try {
    const id = "run-20261129T120000Z-0badc0de";
    await writeRun(runs, id, [
      [
        "telemetry_blocked",
        blockedData("destination", { detail: "OTEL_EXPORTER_OTLP_ENDPOINT https://evil.example:443" }),
      ],
      ["telemetry_blocked", blockedData("ai.experimental_telemetry", { library: "ai", detail: "isEnabled" })],
      ["telemetry_problem", problemData("OTEL_DENO is set; Deno exports its own spans")],
    ]);
    const io = bufferIo();
    equal(await prove(["--runs", runs, "telemetry", id], io), 0);
    deepEqual(io.stdout, [
      "   1 2026-11-29T12:00:00.000000Z blocked destination - OTEL_EXPORTER_OTLP_ENDPOINT https://evil.example:443",
      "   2 2026-11-29T12:00:00.000000Z blocked ai.experimental_telemetry ai isEnabled",
      "   3 2026-11-29T12:00:00.000000Z problem OTEL_DENO is set; Deno exports its own spans",
    ]);
    const json = bufferIo();
    equal(await prove(["--runs", runs, "telemetry", id, "--json"], json), 0);
    const out = JSON.parse(json.text());
    equal(out.run_id, id);
    deepEqual(out.items.map((i: { kind: string }) => i.kind), ["blocked", "blocked", "problem"]);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("prove telemetry says when a run has no blocked attempts and no problems", async () => {
  const runs = await Deno.makeTempDir();
  try {
    const id = "run-20261129T120000Z-00000001";
    await writeRun(runs, id, []);
    const io = bufferIo();
    equal(await prove(["--runs", runs, "telemetry", id], io), 0);
    deepEqual(io.stdout, [`${id}: no blocked attempts and no problems`]);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("prove telemetry exits 2 when the events cannot be read", async () => {
  const runs = await Deno.makeTempDir();
  try {
    const id = "run-20261129T120000Z-00000002";
    await writeRun(runs, id, []);
    await Deno.writeTextFile(`${runs}/${id}/evidence/events.jsonl`, "not json\n", { append: true });
    const io = bufferIo();
    equal(await prove(["--runs", runs, "telemetry", id], io), 2);
    ok(io.stderr[0]!.startsWith("prove: "));
    const missing = bufferIo();
    equal(await prove(["--runs", runs, "telemetry", "run-20261129T120000Z-ffffffff"], missing), 1);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("docs/telemetry.md shows what prove policy prints for the sample policy", async () => {
  const io = bufferIo();
  equal(await prove(["policy", FIXTURES + "telemetry-policy.yaml"], io), 0);
  const doc = await Deno.readTextFile("docs/telemetry.md");
  for (const line of io.stdout) ok(doc.includes(line), `docs/telemetry.md lacks: ${line}`);
  const narrow = bufferIo();
  equal(await prove(["policy", FIXTURES + "newer-ai.yaml"], narrow), 1);
  ok(doc.includes(narrow.stderr[0]!));
});

Deno.test("prove policy --config with a file that is not there says so in one line and exits 1", async () => {
  const io = bufferIo();
  const code = await prove([
    "policy",
    FIXTURES + "telemetry-policy.yaml",
    "--config",
    "/nonexistent/deno.json",
  ], io);
  equal(code, 1);
  equal(io.stderr.length, 1);
  ok(/^prove: cannot read \/nonexistent\/deno\.json as a deno\.json/.test(io.stderr[0]!), io.stderr[0]);
});
