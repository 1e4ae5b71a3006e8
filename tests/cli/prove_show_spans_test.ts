import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { provr } from "../../cli/provr.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import type { TraceSpan } from "../../lib/provevi/evidence/run_spans.ts";
import { RunFile } from "../../lib/provrun/run/run_file.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";

const RUNS = new URL("../../fixtures/runs/", import.meta.url).pathname;

async function run(cli: typeof prove, args: string[]) {
  const io = bufferIo();
  const code = await cli(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

/** The span cell of each line: after the component, as wide as the widest (the run's own span, here). */
const spanCells = (lines: string[]) => {
  const width = "invoke_agent revenue-question 18.0ms".length;
  return lines.map((l) => l.slice(83, 83 + width).trimEnd());
};

Deno.test("prove show prints each event with its span: the name under its parent, and how long it took", async () => {
  const r = await run(prove, ["--runs", RUNS, "show", SAMPLE_RUN_ID]);
  assert.equal(r.code, 0, r.err.join("\n"));
  const cells = spanCells(r.out);
  // The run's own span for its first and last events; each step's span indented under its parent.
  assert.equal(cells[0], "invoke_agent revenue-question 18.0ms");
  assert.equal(cells[6], "  sandbox_started -");
  assert.equal(cells[8], "    chat answer 1.4ms");
  assert.equal(cells[12], "invoke_agent revenue-question 18.0ms");
  // provr show prints the same.
  const same = await run(provr, ["--runs", RUNS, "show", SAMPLE_RUN_ID]);
  assert.deepEqual(same.out, r.out);
});

Deno.test("prove show --json gives the run's spans, each with its parent, times, events and depth", async () => {
  const r = await run(prove, ["--runs", RUNS, "show", SAMPLE_RUN_ID, "--json"]);
  const json = JSON.parse(r.out.join("\n")) as {
    events: { seq: number }[];
    spans: (TraceSpan & { depth: number })[];
  };
  assert.equal(json.events.length, 13);
  assert.deepEqual(
    json.spans.map((s) => [s.span_id, s.parent_span_id, s.depth, s.seqs]),
    [
      ["0000000000000001", null, 0, [0, 12]],
      ["0000000000000002", "0000000000000001", 1, [1, 2]],
      ["0000000000000003", "0000000000000001", 1, [3, 4]],
      ["0000000000000004", "0000000000000001", 1, [5]],
      ["0000000000000005", "0000000000000001", 1, [6, 7, 9]],
      ["0000000000000006", "0000000000000005", 2, [8]],
      ["0000000000000007", "0000000000000001", 1, [10]],
      ["0000000000000008", "0000000000000001", 1, [11]],
    ],
  );
  // Every event is on one of the spans.
  assert.deepEqual(json.spans.flatMap((s) => s.seqs).sort((a, b) => a - b), json.events.map((e) => e.seq));
});

Deno.test("prove show names a recorded run's spans from its span index, and from its events once its folder moved", async () => {
  const dir = await Deno.makeTempDir({ prefix: "prove-show-spans-" });
  try {
    const db = join(dir, "evidence.db");
    const runs = join(dir, "runs");
    let runId: string;
    {
      await using store = new SqliteStore(db, { runs });
      const outcome = await runFile(
        RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent: { name: q, backend: call, model: "test:", script: { model: m, turns: [{ text: "ok" }] } }
prompt: hi
`),
        { store, environ: {} },
      );
      runId = outcome.runId;
    }
    const uri = `sqlite:///${db}`;
    const here = await run(prove, ["--store", uri, "--runs", runs, "show", runId]);
    assert.equal(here.code, 0, here.err.join("\n"));
    const chat = here.out.find((l) => / model_called /.test(l))!;
    assert.match(chat, /CallBackend {3,}chat inline \d/);
    const json = JSON.parse(
      (await run(prove, ["--store", uri, "--runs", runs, "show", runId, "--json"])).out.join("\n"),
    );
    assert.ok(json.spans.some((s: TraceSpan) => s.source === "index"), "the span index was read");
    // The folder moved: the rows hold every line, and the spans are made from the events.
    await Deno.rename(runs, join(dir, "moved"));
    const moved = await run(prove, ["--store", uri, "--runs", runs, "show", runId]);
    assert.equal(moved.code, 0, moved.err.join("\n"));
    assert.match(moved.out.find((l) => / model_called /.test(l))!, /CallBackend {3,}chat inline \d/);
    const made = JSON.parse(
      (await run(prove, ["--store", uri, "--runs", runs, "show", runId, "--json"])).out.join("\n"),
    );
    assert.ok(made.spans.every((s: TraceSpan) => s.source === "evidence"), "made from the events");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
