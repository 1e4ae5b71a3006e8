import assert from "node:assert/strict";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { batchSpans } from "../../../lib/provevi/receiver/received_batch.ts";
import { receiver } from "../../../lib/provevi/receiver/run_receiver.ts";
import { decodeTraceRows } from "../../../lib/provevi/receiver/otlp_rows.ts";
import { generalRows } from "./_rows_reference.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { readSpansFile } from "../../../lib/provevi/evidence/spans_file.ts";
import { indexedSpans } from "../../../lib/provevi/store/trace.ts";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";
import { removeWritable } from "../../_files.ts";
import { peerTest } from "../../_peers.ts";

const PYTHON = Deno.env.get("PROVRUN_TEST_OTEL_PYTHON");

// The Python SDK's own OTLP/HTTP exporters, protobuf (gzip) and JSON, each sending a parent and a child span.
const SCRIPT = `
import sys
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Proto
from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter as Json
url = sys.argv[1]
for name, exporter in (("proto", Proto(endpoint=url, compression=Compression.Gzip)), ("json", Json(endpoint=url))):
    provider = TracerProvider(resource=Resource.create({"service.name": "python-" + name}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("py." + name, "1.0")
    with tracer.start_as_current_span("invoke_agent " + name) as parent:
        with tracer.start_as_current_span("chat gpt-4o", attributes={"gen_ai.usage.input_tokens": 9, "ok": True}):
            pass
        print(format(parent.get_span_context().trace_id, "032x"))
    provider.shutdown()
`;

peerTest("python-otel", {
  name: "receiver() takes the Python OpenTelemetry SDK's OTLP/HTTP protobuf (gzip) and JSON exporters",
  fn: async () => {
    if (PYTHON === undefined) {
      throw new Error("PROVRUN_TEST_OTEL_PYTHON is unset: .ci/peers/agents.sh installs it");
    }
    const runs = await Deno.makeTempDir({ prefix: "provevi-python-" });
    try {
      const store = new FileStore({ runs });
      const writer = await store.openRun("run-20261130T120000Z-00000c0d");
      const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
      await using spans = receiver(store, recorder);
      const out = await new Deno.Command(PYTHON, {
        args: ["-c", SCRIPT, spans.tracesUrl],
        // the run's key, as a program gets it: the SDK's own variable
        env: {
          OTEL_SDK_DISABLED: "false",
          OTEL_EXPORTER_OTLP_HEADERS: `authorization=${spans.headers.authorization}`,
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const said = new TextDecoder().decode(out.stdout).trim().split("\n");
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
      assert.equal(spans.spans, 4);
      assert.equal(spans.refused, 0);
      assert.equal(spans.strangers, 0);
      await recorder.seal();
      const events = readEventsText(await Deno.readTextFile(`${writer.folder}/evidence/events.jsonl`)).events;
      // one batch a request, each the body as the SDK sent it (gzip undone)
      assert.deepEqual(events.map((e) => [e.type, e.data.encoding, e.data.services]), [
        ["spans_received", "protobuf", ["python-proto"]],
        ["spans_received", "protobuf", ["python-proto"]],
        ["spans_received", "json", ["python-json"]],
        ["spans_received", "json", ["python-json"]],
      ]);
      const record = await findRun(writer.folder);
      const received = [];
      for (const e of events) received.push(...batchSpans(e, await record.payload(e.payload!)));
      assert.deepEqual(received.map((s) => [s.traceId, s.name, s.scope.name, s.resource["service.name"]]), [
        [said[0], "chat gpt-4o", "py.proto", "python-proto"],
        [said[0], "invoke_agent proto", "py.proto", "python-proto"],
        [said[1], "chat gpt-4o", "py.json", "python-json"],
        [said[1], "invoke_agent json", "py.json", "python-json"],
      ]);
      assert.deepEqual(received[0]!.attributes, { "gen_ai.usage.input_tokens": 9, ok: true });
      assert.equal(received[0]!.parentSpanId, received[1]!.spanId);
      // the rows keep usage; an attribute that may hold content (ok) stays in the payload only
      const rows = await indexedSpans(record, events);
      assert.equal(rows.length, 4);
      const chat = rows.find((r) => r.scope.name === "py.proto" && r.name === "chat gpt-4o");
      assert.deepEqual(chat?.attributes, { "gen_ai.usage.input_tokens": 9 });
      // spans.jsonl holds the JSON requests' rows; the protobuf ones' a reader makes in one pass, after them,
      // and they are the lines the general way makes of their bodies
      assert.equal((await readSpansFile(writer.folder)).length, 2);
      let general = "";
      for (const e of events.filter((e) => e.data.encoding === "protobuf")) {
        const body = await record.payload(e.payload!);
        assert.notEqual(decodeTraceRows(body), null);
        general += generalRows(body)!.lines;
      }
      assert.deepEqual(rows.slice(2), general.split("\n").filter(Boolean).map((l) => JSON.parse(l)));
    } finally {
      await removeWritable(runs);
    }
  },
});
