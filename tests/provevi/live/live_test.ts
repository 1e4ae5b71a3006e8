import { deepEqual, equal } from "node:assert/strict";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import type { EvidenceEvent, Json } from "../../../lib/provevi/evidence/event.ts";
import { FileRunRecord, FileStore } from "../../../lib/provevi/store/file_store.ts";
import { payloadOf, shownAt } from "../../../lib/provevi/live/live.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";

const chain = new EventChain("run-20261129T120000Z-0badc0de");
function event(
  type: string,
  data: { [key: string]: Json },
  more: Partial<EvidenceEvent> = {},
): EvidenceEvent {
  const c = chain.next({
    type,
    component: "Recorder",
    actor: "someone",
    data,
    time: "2026-11-29T12:00:00.000000Z",
  });
  chain.accept(c);
  return { ...c.event, ...more };
}

const modelCalled = event("model_called", {
  model: "openrouter/meta-llama/llama-3-70b",
  answered_by: "meta-llama/llama-3-70b-instruct",
  status: "ok",
  input_tokens: 120,
  output_tokens: 30,
  usage: { input_tokens: 120, output_tokens: 30 },
  purpose: "sum the revenue of Q1",
  file: "input/revenue.csv",
  response_payload: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
}, { refs: ["run://acme/demo/dev/x"] });

Deno.test("shownAt() gives null when the policy names no live viewer", async () => {
  equal(await shownAt(modelCalled, TelemetryPolicy.denyAll().liveLevel()), null);
});

Deno.test("shownAt() at names keeps only the plain names under listed keys", async () => {
  const item = await shownAt(modelCalled, "names");
  deepEqual(item, {
    type: "event",
    run_id: "run-20261129T120000Z-0badc0de",
    seq: 0,
    time: "2026-11-29T12:00:00.000000Z",
    event: "model_called",
    component: "Recorder",
    actor: "someone",
    data: {
      model: "openrouter/meta-llama/llama-3-70b",
      answered_by: "meta-llama/llama-3-70b-instruct",
      status: "ok",
      response_payload: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    },
  });
});

Deno.test("shownAt() at usage adds the counts, and a mapping of plain names to numbers", async () => {
  const item = await shownAt(modelCalled, "usage");
  equal(item!.data.input_tokens, 120);
  deepEqual(item!.data.usage, { input_tokens: 120, output_tokens: 30 });
  equal("purpose" in item!.data, false);
  equal("file" in item!.data, false);
  equal(item!.refs, undefined);
  const bad = await shownAt(
    event("model_called", { usage: { "/etc/passwd": 1 }, input_tokens: "12" }),
    "usage",
  );
  deepEqual(bad!.data, {});
});

Deno.test("shownAt() at names leaves out a name that is not plain, and a component or actor that is not", async () => {
  const item = await shownAt(
    event("run_created", {
      model: "token=abc",
      parent_run: "run-20261129T110000Z-00000001",
      experiment: "experiment://acme/risk/dev/credit/q?at=commit:3f2a9c1d",
      experiment_pin: "experiment://acme/risk/dev/credit/q?at=branch:main",
    }, { component: "a component", actor: "user@host:password" }),
    "names",
  );
  deepEqual(item!.data, {
    parent_run: "run-20261129T110000Z-00000001",
    experiment: "experiment://acme/risk/dev/credit/q?at=commit:3f2a9c1d",
  });
  equal(item!.component, undefined);
  equal(item!.actor, undefined);
});

Deno.test("shownAt() cuts a library span's attributes and name to the level", async () => {
  const span = event("span_recorded", {
    name: "chat gpt-4o",
    attributes: {
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.usage.input_tokens": 12,
      "gen_ai.input.messages": "[]",
      "server.address": "token=x",
    },
  });
  deepEqual((await shownAt(span, "names"))!.data, {
    name: "chat gpt-4o",
    attributes: { "gen_ai.request.model": "gpt-4o" },
  });
  deepEqual((await shownAt(span, "usage"))!.data.attributes, {
    "gen_ai.request.model": "gpt-4o",
    "gen_ai.usage.input_tokens": 12,
  });
  const odd = event("span_recorded", { name: "read /etc/passwd", attributes: {} });
  deepEqual((await shownAt(odd, "names"))!.data, { attributes: {} });
});

Deno.test("shownAt() at bodies gives all the data, the refs, and with a record the payload", async () => {
  const runs = await Deno.makeTempDir();
  try {
    const store = new FileStore({ runs });
    const writer = await store.openRun("run-20261129T120000Z-0badc0de");
    const digest = await writer.putPayload(new TextEncoder().encode('{"answer":"Q1 12.4M"}'));
    const record = new FileRunRecord("run-20261129T120000Z-0badc0de", writer.folder);
    const e = { ...modelCalled, payload: digest };
    const item = await shownAt(e, "bodies");
    deepEqual(item!.data, modelCalled.data);
    deepEqual(item!.refs, ["run://acme/demo/dev/x"]);
    equal(item!.payload, undefined);
    deepEqual((await shownAt(e, "bodies", { record }))!.payload, { answer: "Q1 12.4M" });
    deepEqual(await payloadOf(record, digest), { answer: "Q1 12.4M" });
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});
