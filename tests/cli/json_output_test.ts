import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { snakeKey, snakeKeys, USER_KEYED } from "../../cli/_json.ts";
import { tour } from "../../cli/tour.ts";
import { prove } from "../../cli/prove.ts";
import { provr } from "../../cli/provr.ts";
import { provtrace } from "../../cli/provtrace.ts";
import { openStore } from "../../lib/provevi/runs/open_store.ts";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/policy.ts";
import { serveViewer } from "../../lib/provevi/viewer/viewer_server.ts";
import { removeWritable } from "../_files.ts";

const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname;
const SNAKE = /^[a-z0-9]+(_[a-z0-9]+)*$/;

/** The keys of a JSON value that are not snake_case, outside the documented user-keyed maps. */
function badKeys(value: unknown, path: string, bad: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => badKeys(v, `${path}[]`, bad));
  else if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      if (!SNAKE.test(key)) bad.push(`${path}.${key}`);
      if (!USER_KEYED.has(key)) badKeys(inner, `${path}.${key}`, bad);
    }
  }
  return bad;
}

type Cli = (args: string[], io: ReturnType<typeof bufferIo>) => Promise<number>;

Deno.test("every --json output of prove, provr and provtrace has snake_case keys, on a file and a sqlite store", async () => {
  const dir = await Deno.makeTempDir({ prefix: "json-keys-" });
  const runs = join(dir, "runs");
  const io = bufferIo();
  assert.equal(await tour(io, { runs }), 0, io.stderr.join("\n"));
  const id = /ran (run-\S+)/.exec(io.stdout.join("\n"))![1]!;
  const config = join(dir, "tour", "provcat.yaml");
  const db = join(dir, "evidence.db");
  const sqlite = ["--store", `sqlite:///${db}`];
  const trace = join(dir, "trace.db");
  const policy = join(FIXTURES, "policies", "telemetry-policy.yaml");
  const printed: string[] = [];
  const bad: string[] = [];
  const json = async (cli: Cli, args: string[], code = 0) => {
    const out = bufferIo();
    assert.equal(await cli(args, out), code, `${args.join(" ")}: ${out.stderr.join("\n")}`);
    const name = args.filter((a) => !a.startsWith("/") && !a.startsWith("sqlite:")).join(" ");
    printed.push(name);
    badKeys(JSON.parse(out.text()), name, bad);
  };

  // The file store.
  await json(prove, ["--runs", runs, "runs", "--json"]);
  await json(prove, ["--runs", runs, "show", id, "--json"]);
  await json(prove, ["--runs", runs, "verify", id, "--config", config, "--json"]);
  await json(prove, ["--runs", runs, "telemetry", id, "--json"]);
  await json(prove, ["keygen", join(dir, "signing.key"), "--json"]);
  await json(prove, ["policy", policy, "--json"]);
  await json(provr, ["--runs", runs, "show", id, "--json"]);
  await json(provr, ["--runs", runs, "verify", id, "--config", config, "--json"]);
  await json(provr, [
    "--runs",
    runs,
    "run",
    join(FIXTURES, "tour", "run.yaml"),
    "--config",
    config,
    "--json",
  ]);
  await json(prove, ["--runs", runs, "diff", id, id, "--json"]);
  await json(provr, ["--runs", runs, "replay", id, "--config", config, "--json"]);
  await json(provr, [
    "catalog",
    "pin",
    "data://acme/demo/dev/finance/revenue.csv?at=branch:main",
    "--config",
    config,
    "--json",
  ]);
  await json(provr, ["catalog", "ls", "data://acme/demo/dev/finance", "--config", config, "--json"]);
  const note = join(dir, "note.txt");
  await Deno.writeTextFile(note, "a note\n");
  await json(provr, [
    "catalog",
    "put",
    "data://acme/demo/dev/notes/note.txt",
    note,
    "--config",
    config,
    "--json",
  ]);
  await json(provr, [
    "catalog",
    "commit",
    "data://acme/demo/dev/notes",
    "-m",
    "a note",
    "--config",
    config,
    "--json",
  ]);
  await json(provr, [
    "catalog",
    "snapshot",
    "data://acme/demo/dev/notes/note.txt?at=branch:main",
    "--config",
    config,
    "--json",
  ]);
  // The sqlite store: one run copied there, one run made there.
  const toRuns = ["--to-runs", join(dir, "runs-sqlite")];
  await json(prove, [
    "--runs",
    runs,
    "export",
    id,
    "--to",
    `sqlite:///${db}`,
    ...toRuns,
    "--config",
    config,
    "--json",
  ]);
  await json(provr, [
    ...sqlite,
    "--runs",
    join(dir, "runs-sqlite"),
    "run",
    join(FIXTURES, "tour", "run.yaml"),
    "--config",
    config,
    "--json",
  ]);
  await json(prove, [...sqlite, "runs", "--json"]);
  await json(prove, [...sqlite, "show", id, "--json"]);
  await json(prove, [...sqlite, "verify", id, "--config", config, "--json"]);
  await json(prove, [...sqlite, "telemetry", id, "--json"]);
  await json(prove, [...sqlite, "assess", id, "quality", "0.9", "--rationale", "checked", "--json"]);
  await json(prove, [...sqlite, "experiments", "--json"]);
  await json(prove, [...sqlite, "agents", "--json"]);
  await json(prove, [...sqlite, "agent", "show", "acme/demo/dev/revenue-question", "--json"]);
  await json(prove, [...sqlite, "access", id, "--json"]);
  await json(prove, [...sqlite, "runs", "--reading", "data://acme/demo/dev/finance/revenue.csv", "--json"]);
  // provtrace, from the sqlite store.
  await json(provtrace, ["build", ...sqlite, "--db", trace, "--config", config, "--json"]);
  await json(provtrace, ["check", "--db", trace, ...sqlite, "--config", config, "--json"]);
  await json(provtrace, ["runs", "--db", trace, "--json"]);
  for (const kind of ["steps", "sft"]) {
    const out = bufferIo();
    assert.equal(
      await provtrace(["export", "--db", trace, ...sqlite, "--kind", kind, "--config", config], out),
      0,
      out.stderr.join("\n"),
    );
    assert.ok(out.stdout.length > 0);
    for (const line of out.stdout.join("\n").split("\n")) {
      badKeys(JSON.parse(line), `provtrace export --kind ${kind}`, bad);
    }
  }
  // The viewer's /api, on the sqlite store.
  const store = await openStore(`sqlite:///${db}`, { readOnly: true });
  const viewer = await serveViewer(store, {
    policy: await TelemetryPolicy.load(join(FIXTURES, "policies", "live-viewer.yaml")),
    port: 0,
  });
  try {
    for (const path of ["api/info", "api/runs", `api/runs/${id}`, "api/agents", "api/experiments"]) {
      const response = await fetch(`${viewer.url}${path}`);
      assert.equal(response.status, 200, path);
      badKeys(await response.json(), `prove ui ${path}`, bad);
    }
  } finally {
    await viewer.shutdown();
    await store.close();
  }
  assert.deepEqual(bad, [], `keys that are not snake_case:\n${bad.join("\n")}`);
  assert.ok(printed.length >= 25);
  await removeWritable(dir);
});

Deno.test("the JSON keys are renamed at the edge, and the user's own keys are kept as written", () => {
  assert.equal(snakeKey("runId"), "run_id");
  assert.equal(snakeKey("mlflowRunId"), "mlflow_run_id");
  assert.equal(snakeKey("run_id"), "run_id");
  assert.equal(snakeKey("@ai-sdk/openai"), "@ai-sdk/openai");
  assert.equal(snakeKey("Content-Type"), "Content-Type");
  assert.deepEqual(
    snakeKeys({
      runId: "r",
      signedBy: [],
      events: [{ seq: 0, data: { toolArgs: { fileName: "a" } } }],
      policy: { libraries: { myLib: { versions: "^1" } } },
      value: { userScore: 1 },
      skipped: undefined,
    }),
    {
      run_id: "r",
      signed_by: [],
      events: [{ seq: 0, data: { toolArgs: { fileName: "a" } } }],
      policy: { libraries: { myLib: { versions: "^1" } } },
      value: { userScore: 1 },
    },
  );
});
