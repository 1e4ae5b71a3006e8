/**
 * The copy into the sqlite store's own file (an MLflow server started for the copy), MLflow's viewer on that
 * file, and the span tree in MLflow's UI in a real headless Chromium.
 * @module
 */
import assert from "node:assert/strict";
import { delimiter, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import puppeteer from "puppeteer-core";
import { ProveviError } from "../../../lib/provevi/evidence/errors.ts";
import { copyRun } from "../../../lib/provevi/mlflow/copy_run.ts";
import { freePort } from "../../../lib/provevi/mlflow/mlflow_server.ts";
import { openMlflowViewer } from "../../../lib/provevi/mlflow/mlflow_viewer.ts";
import { mlflowPolicy, readBackProgram, storeWithRun } from "./_mlflow.ts";
import { mlflowPython, needMlflow } from "./_mlflow_peer.ts";
import { peerTest } from "../../_peers.ts";

const CHROMIUM = "/usr/bin/chromium";
/** Where the screenshot of MLflow's trace view is kept (git-ignored). */
const SHOTS = new URL("../../../.tools/screenshots/", import.meta.url).pathname;

peerTest("mlflow", {
  name:
    "the copy into the store's own file starts MLflow on it; MLflow's viewer and its UI show the span tree",
  sanitizeResources: false, // puppeteer keeps a pipe to the browser until it has closed
  sanitizeOps: false,
  async fn() {
    const { bin, python } = needMlflow();
    await using t = await storeWithRun({ agent: `viewer-${crypto.randomUUID().slice(0, 8)}` });
    const runId = t.runIds[0]!;
    const file = join(t.dir, "evidence.db");
    const environ = { PATH: `${bin}${delimiter}${Deno.env.get("PATH") ?? ""}`, HOME: Deno.env.get("HOME") };

    const result = await copyRun(t.store, runId, mlflowPolicy("usage", null), { environ });
    assert.equal(result.place, `sqlite:///${file}`);
    // MLflow's tables are beside provevi's, through MLflow's own client on the file.
    const back = await mlflowPython(readBackProgram(result.experimentName, runId), `sqlite:///${file}`) as {
      runs: { run_id: string; traces: { trace_id: string; spans: { name: string }[] }[] }[];
    };
    assert.deepEqual(back.runs.map((r) => r.run_id), [result.mlflowRunId]);
    assert.ok(back.runs[0]!.traces[0]!.spans.some((s) => s.name === "execute_tool read_file"));
    assert.ok(python);

    // The viewer passes MLflow no MLFLOW_ or OTEL_ variable of the shell.
    const port = freePort();
    await using viewer = await openMlflowViewer(t.store, {
      port,
      environ: {
        ...environ,
        MLFLOW_TRACKING_URI: "http://mlflow.example.com",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel.example.com",
      },
    });
    assert.equal(viewer.url, `http://127.0.0.1:${port}`);
    assert.equal(viewer.file, file);
    // `ps eww` shows a process's variables after its command (procps); reading /proc needs --allow-all.
    const shown = new TextDecoder().decode(
      (await new Deno.Command("ps", { args: ["eww", "-p", String(viewer.pid)], stdout: "piped" }).output())
        .stdout,
    );
    assert.ok(shown.includes("MLFLOW_DISABLE_AGENT_HINT=1"), shown);
    assert.ok(!shown.includes("MLFLOW_TRACKING_URI=") && !shown.includes("OTEL_"), shown);

    const profile = await Deno.makeTempDir({ prefix: "provevi-chromium-" });
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        `--user-data-dir=${profile}`,
      ],
    });
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1400, height: 900 });
      await page.goto(
        `${viewer.url}/#/experiments/${result.experimentId}/traces?selectedEvaluationId=${result.traceId}`,
        { waitUntil: "networkidle2", timeout: 300_000 },
      );
      // The span tree: the root span and a step of each kind, by the names the copy gave them.
      // Page code as text: it runs in the browser, where `document` is.
      await page.waitForFunction(
        `["execute_tool read_file", "execute_tool write_file", "chat "].every((s) => document.body.innerText.includes(s))`,
        { timeout: 300_000 },
      );
      const text = await page.evaluate("document.body.innerText") as string;
      assert.ok(text.includes(`invoke_agent ${result.experimentName.split("/").pop()}`), "the root span");
      await Deno.mkdir(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, "mlflow-trace.png") });
    } finally {
      await browser.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    }
  },
});

peerTest("mlflow", {
  name: "MLflow's viewer refuses a store that is not a sqlite store, and a port in use",
  async fn() {
    await using t = await storeWithRun({ runs: 0 });
    const { FileStore } = await import("../../../lib/provevi/store/file_store.ts");
    await assert.rejects(
      openMlflowViewer(new FileStore({ runs: join(t.dir, "runs") })),
      (e: unknown) => e instanceof ProveviError && /sqlite store's own file/.test(e.message),
    );
    using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    await assert.rejects(openMlflowViewer(t.store, { port }), /port \d+ of 127\.0\.0\.1 is in use/);
  },
});

peerTest("mlflow", {
  name: "the copy into a database with no mlflow on the PATH says how to install it",
  async fn() {
    await using t = await storeWithRun({ agent: `nobin-${crypto.randomUUID().slice(0, 8)}` });
    await assert.rejects(
      copyRun(t.store, t.runIds[0]!, mlflowPolicy("usage", null), { environ: { PATH: "/nonexistent" } }),
      (e: unknown) =>
        e instanceof ProveviError &&
        /no mlflow program on the PATH; install it with `pip install mlflow==3\.17\.2`/
          .test(e.message),
    );
  },
});

peerTest("mlflow", {
  name:
    "a copy made again into a database deletes the first copy's run, params and tags for good, with MLflow's own gc",
  async fn() {
    const { bin } = needMlflow();
    await using t = await storeWithRun({ agent: `again-${crypto.randomUUID().slice(0, 8)}` });
    const runId = t.runIds[0]!;
    const file = join(t.dir, "evidence.db");
    const environ = { PATH: `${bin}${delimiter}${Deno.env.get("PATH") ?? ""}`, HOME: Deno.env.get("HOME") };
    const first = await copyRun(t.store, runId, mlflowPolicy("usage", null), { environ });
    const second = await copyRun(t.store, runId, mlflowPolicy("usage", null), { environ });
    assert.deepEqual([second.deleted, second.purgeProblem], [[first.mlflowRunId], null]);
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      const count = (sql: string, id: string) => Number((db.prepare(sql).get(id) as { n: number }).n);
      for (const table of ["runs", "params", "tags", "latest_metrics", "metrics"]) {
        assert.equal(
          count(`SELECT count(*) AS n FROM ${table} WHERE run_uuid = ?`, first.mlflowRunId),
          0,
          table,
        );
        assert.ok(
          count(`SELECT count(*) AS n FROM ${table} WHERE run_uuid = ?`, second.mlflowRunId) > 0,
          table,
        );
      }
      // Each copy's inputs name the one dataset row of that name and source, which MLflow shares in an experiment.
      assert.equal(
        count(
          "SELECT count(DISTINCT d.dataset_uuid) AS n FROM datasets d JOIN experiments e USING (experiment_id) WHERE e.name = ?",
          second.experimentName,
        ),
        1,
      );
    } finally {
      db.close();
    }
  },
});
