import assert from "node:assert/strict";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { FileStore, readSpansFile } from "../../lib/provevi/mod.ts";
import { prove } from "../../cli/prove.ts";
import { bufferIo } from "../../cli/_io.ts";
import { removeWritable } from "../_files.ts";

Deno.test("prove serve, under the task's own permissions, takes spans for two open runs at once and stops on SIGTERM", async () => {
  const runs = await Deno.makeTempDir({ prefix: "prove-serve-" });
  try {
    const store = new FileStore({ runs });
    const ids = ["run-20261130T120000Z-000000aa", "run-20261130T120000Z-000000bb"];
    for (const id of ids) await store.openRun(id);
    const config = JSON.parse(await Deno.readTextFile("deno.json"));
    const words = (config.tasks.prove as string).split(" ").slice(1);
    const child = new Deno.Command(Deno.execPath(), {
      args: [...words, "--runs", runs, "serve"],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let said = "";
    while (!said.includes("\n")) said += (await reader.read()).value ?? "";
    const url = said.match(/taking spans at (http:\/\/127\.0\.0\.1:\d+)/)?.[1];
    assert.ok(url, said);
    const opened = await Promise.all(ids.map(async (run_id) => {
      const r = await fetch(`${url}/runs`, { method: "POST", body: JSON.stringify({ run_id }) });
      return await r.json() as { traces_url: string; seal_url: string };
    }));
    await Promise.all(opened.map(async (o, i) => {
      const provider = new BasicTracerProvider({
        spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: o.traces_url }))],
      });
      provider.getTracer("codex").startSpan(`span.${i}`).end();
      await provider.shutdown();
    }));
    for (const [i, id] of ids.entries()) {
      assert.deepEqual((await readSpansFile(`${runs}/${id}`)).map((s) => s.name), [`span.${i}`]);
    }
    const sealed = await (await fetch(opened[0]!.seal_url, { method: "POST" })).json();
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
    assert.match(said, new RegExp(`runs still open: ${ids[1]}`));
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
