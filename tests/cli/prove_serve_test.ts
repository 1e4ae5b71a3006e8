import assert from "node:assert/strict";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { readDaemonFile } from "../../lib/provevi/receiver/daemon_file.ts";
import type { OpenedRun } from "../../lib/provevi/receiver/span_daemon.ts";
import { readSpansFile } from "../../lib/provevi/evidence/spans_file.ts";
import { prove } from "../../cli/prove.ts";
import { bufferIo } from "../../cli/_io.ts";
import { removeWritable } from "../_files.ts";

Deno.test("prove serve, under the task's own permissions, writes its secret to a file only its user reads, takes spans for two runs opened with it, and stops on SIGTERM", async () => {
  const runs = await Deno.makeTempDir({ prefix: "prove-serve-" });
  try {
    const store = new FileStore({ runs });
    const ids = ["run-20261130T120000Z-000000aa", "run-20261130T120000Z-000000bb"];
    for (const id of ids) await store.openRun(id);
    const config = JSON.parse(await Deno.readTextFile("deno.json"));
    const words = (config.tasks.prove as string).split(" ").slice(1);
    const file = `${runs}/secret/serve.json`;
    const child = new Deno.Command(Deno.execPath(), {
      args: [...words, "--runs", runs, "serve", "--secret-file", file],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let said = "";
    while (said.split("\n").length < 3) said += (await reader.read()).value ?? "";
    const url = said.match(/taking spans at (http:\/\/127\.0\.0\.1:\d+)/)?.[1];
    assert.ok(url, said);
    assert.match(
      said,
      new RegExp(`its secret is in ${file} \\(yours only\\); provr opens runs here with PROVE_SERVE=${file}`),
    );
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(`${runs}/secret`)).mode! & 0o777, 0o700);
    const connection = await readDaemonFile(file);
    assert.equal(connection.url, url);
    // without the secret, nothing: not even the list of open runs
    const stranger = await fetch(`${url}/runs`);
    assert.equal(stranger.status, 401);
    await stranger.body?.cancel();
    const opened = await Promise.all(ids.map(async (run_id) => {
      const r = await fetch(`${url}/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${connection.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ run_id }),
      });
      return await r.json() as OpenedRun;
    }));
    await Promise.all(opened.map(async (o, i) => {
      const provider = new BasicTracerProvider({
        spanProcessors: [
          new SimpleSpanProcessor(
            new OTLPTraceExporter({
              url: o.traces_url,
              headers: { authorization: `Bearer ${o.ingest_key}` },
            }),
          ),
        ],
      });
      provider.getTracer("codex").startSpan(`span.${i}`).end();
      await provider.shutdown();
    }));
    for (const [i, id] of ids.entries()) {
      assert.deepEqual((await readSpansFile(`${runs}/${id}`)).map((s) => s.name), [`span.${i}`]);
    }
    const sealed = await (await fetch(opened[0]!.seal_url, {
      method: "POST",
      headers: { authorization: `Bearer ${opened[0]!.writer_key}` },
    })).json();
    assert.equal(sealed.spans, 1);
    child.kill("SIGTERM");
    while (!said.includes("stopped")) {
      const { value, done } = await reader.read();
      if (done) break;
      said += value;
    }
    reader.releaseLock();
    const status = await child.status;
    const err = new TextDecoder().decode(new Uint8Array(await new Response(child.stderr).arrayBuffer()));
    assert.equal(status.code, 0, err);
    assert.match(said, new RegExp(`runs still open: ${ids[1]}; requests refused: 401 ×1`));
    // the secret goes with the daemon
    await assert.rejects(() => Deno.stat(file), Deno.errors.NotFound);
  } finally {
    await removeWritable(runs);
  }
});

Deno.test("prove serve refuses a port that is not a number, in one line", async () => {
  const io = bufferIo();
  const code = await prove(["serve", "--port", "eighty"], io);
  assert.equal(code, 2);
  assert.deepEqual(io.stdout, []);
  assert.deepEqual(io.stderr, ["prove: --port eighty is not a port: give a whole number from 0 to 65535"]);
});
