import assert from "node:assert/strict";
import { startFakeAgentProvider } from "../../../fixtures/providers/fake_agent_provider.ts";
import { PriceTable } from "../../../lib/provevi/cost/price_table.ts";
import { dataCost } from "../../../lib/provevi/cost/run_cost.ts";
import { gatewayRun, programHeaders } from "./_gateway.ts";

const decoder = new TextDecoder();
const ANTHROPIC_BODY = (stream: boolean, tools = false) =>
  JSON.stringify({
    model: "claude-sonnet-4-5",
    max_tokens: 100,
    stream,
    messages: [{ role: "user", content: "What was the growth?" }],
    ...(tools ? { tools: [{ name: "Read", input_schema: { type: "object" } }] } : {}),
  });

Deno.test("a streamed Anthropic call passes through unchanged, with the real key added and the token removed, and is one model_called with its usage, tool calls, payloads and cost", async () => {
  await using provider = startFakeAgentProvider([{ name: "Read", input: { file_path: "input/a.csv" } }], {
    usage: { input: 150, output: 40, cacheRead: 100, cacheWrite: 20, reasoning: 12 },
  });
  const table = PriceTable.builtin();
  await using run = await gatewayRun({
    provider: "anthropic",
    upstream: provider.url,
    price: (data) => dataCost(data, table),
  });
  const { gateway } = run;
  const response = await fetch(`${gateway.url}/v1/messages?beta=true`, {
    method: "POST",
    headers: programHeaders(gateway, "anthropic"),
    body: ANTHROPIC_BODY(true, true),
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type")!, /text\/event-stream/);
  const streamed = await response.text();
  assert.equal(provider.requests.length, 1);
  assert.equal(provider.requests[0]!.key, "sk-real-key");
  assert.equal(provider.requests[0]!.path, "/v1/messages");
  assert.equal(
    provider.requests[0]!.body,
    ANTHROPIC_BODY(true, true),
    "the request is forwarded byte for byte",
  );
  await gateway.close();
  const events = await run.events();
  const call = events.find((e) => e.type === "model_called")!;
  assert.ok(call, JSON.stringify(events.map((e) => e.type)));
  const d = call.data;
  assert.equal(d.via, "gateway");
  assert.equal(d.api, "anthropic-messages");
  assert.equal(d.streamed, true);
  assert.equal(d.model, "claude-sonnet-4-5");
  // input counts the cache; Anthropic's input_tokens does not
  assert.deepEqual(
    [d.input_tokens, d.output_tokens, d.cache_read_tokens, d.cache_write_tokens, d.reasoning_tokens],
    [150, 40, 100, 20, 12],
  );
  assert.equal(d.finish_reason, "tool-calls");
  assert.deepEqual(d.tool_calls, [{ id: "toolu_fake_1", name: "Read" }]);
  // 30×3 + 100×0.3 + 20×3.75 + 28×15 + 12×15 per million
  assert.equal(d.cost, "0.000795");
  assert.equal(decoder.decode(await run.payload(call.payload!)), ANTHROPIC_BODY(true, true));
  assert.equal(decoder.decode(await run.payload(d.stream_payload as string)), streamed);
  const reassembled = JSON.parse(decoder.decode(await run.payload(d.response_payload as string)));
  assert.equal(reassembled.content[0].type, "tool_use");
  assert.deepEqual(reassembled.content[0].input, { file_path: "input/a.csv" });
  assert.equal(reassembled.usage.output_tokens, 40);
  assert.ok(typeof d.first_byte_ms === "number" && typeof d.duration_ms === "number");
  assert.equal(call.started_at !== null, true);
});

Deno.test("a non-streamed call's response is recorded as the provider sent it, byte for byte", async () => {
  await using provider = startFakeAgentProvider([]);
  await using run = await gatewayRun({ provider: "anthropic", upstream: `${provider.url}/v1` });
  const response = await fetch(`${run.gateway.url}/v1/messages`, {
    method: "POST",
    headers: programHeaders(run.gateway, "anthropic"),
    body: ANTHROPIC_BODY(false),
  });
  const text = await response.text();
  assert.equal(response.status, 200);
  await run.gateway.close();
  const call = (await run.events()).find((e) => e.type === "model_called")!;
  assert.equal(decoder.decode(await run.payload(call.data.response_payload as string)), text);
  assert.equal(call.data.stream_payload, undefined);
  assert.equal(call.data.finish_reason, "stop");
});

for (const stream of [true, false]) {
  Deno.test(`OpenAI Responses and Chat Completions calls (${stream ? "streamed" : "not streamed"}) are recorded with OpenAI's usage made one shape`, async () => {
    await using provider = startFakeAgentProvider([{ name: "exec_command", input: { cmd: "ls" } }], {
      usage: { input: 1000, output: 300, cacheRead: 800, reasoning: 200 },
    });
    await using run = await gatewayRun({ provider: "openai", upstream: provider.openaiBaseUrl });
    const headers = programHeaders(run.gateway, "openai");
    const tools = [{ type: "function", name: "exec_command", parameters: {} }];
    const r1 = await fetch(`${run.gateway.openaiUrl}/responses`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "gpt-5", stream, input: [{ role: "user", content: "hi" }], tools }),
    });
    await r1.text();
    const r2 = await fetch(`${run.gateway.openaiUrl}/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "gpt-5", stream, messages: [{ role: "user", content: "hi" }] }),
    });
    const chatText = await r2.text();
    assert.equal(r1.status, 200);
    assert.equal(r2.status, 200);
    assert.ok(provider.requests.every((r) => r.key === "sk-real-key"));
    await run.gateway.close();
    const calls = (await run.events()).filter((e) => e.type === "model_called");
    assert.deepEqual(calls.map((c) => c.data.api), ["openai-responses", "openai-chat"]);
    for (const c of calls) {
      // OpenAI's input counts its cached tokens, and its output the reasoning
      assert.deepEqual([
        c.data.input_tokens,
        c.data.cache_read_tokens,
        c.data.output_tokens,
        c.data.reasoning_tokens,
      ], [
        1000,
        800,
        300,
        200,
      ]);
    }
    assert.deepEqual(calls[0]!.data.tool_calls, [{ id: "call_fake_1", name: "exec_command" }]);
    assert.equal(calls[0]!.data.finish_reason, "tool-calls");
    const chat = JSON.parse(decoder.decode(await run.payload(calls[1]!.data.response_payload as string)));
    assert.equal(chat.choices[0].message.content, "Revenue grew 12% in Q3.");
    if (stream) {
      assert.equal(decoder.decode(await run.payload(calls[1]!.data.stream_payload as string)), chatText);
    }
  });
}

Deno.test("the gateway refuses a request without the run's token, a wrong token, an unknown path, a body that is not JSON and a body over its limit, each with the API's error and a recorded problem, and forwards none", async () => {
  await using provider = startFakeAgentProvider([]);
  await using run = await gatewayRun({ provider: "anthropic", upstream: provider.url, requestBytes: 1000 });
  const { gateway } = run;
  const post = (path: string, headers: HeadersInit, body: string) =>
    fetch(`${gateway.url}${path}`, { method: "POST", headers, body });
  const cases: [string, Promise<Response>, number, string][] = [
    [
      "no token",
      post("/v1/messages", { "content-type": "application/json" }, ANTHROPIC_BODY(false)),
      401,
      "authentication_error",
    ],
    [
      "a wrong token",
      post("/v1/messages", { "x-api-key": `${gateway.token}x` }, ANTHROPIC_BODY(false)),
      401,
      "authentication_error",
    ],
    [
      "the real key",
      post("/v1/messages", { "x-api-key": "sk-real-key" }, ANTHROPIC_BODY(false)),
      401,
      "authentication_error",
    ],
    [
      "an unknown path",
      post("/v1/files", programHeaders(gateway, "anthropic"), "{}"),
      404,
      "not_found_error",
    ],
    [
      "a body that is not JSON",
      post("/v1/messages", programHeaders(gateway, "anthropic"), "{not json"),
      400,
      "invalid_request_error",
    ],
    [
      "a body without a model",
      post("/v1/messages", programHeaders(gateway, "anthropic"), "[]"),
      400,
      "invalid_request_error",
    ],
    [
      "a body over the limit",
      post("/v1/messages", programHeaders(gateway, "anthropic"), "x".repeat(5000)),
      413,
      "request_too_large",
    ],
  ];
  for (const [what, answer, status, type] of cases) {
    const response = await answer;
    const body = await response.json();
    assert.equal(response.status, status, what);
    assert.equal(body.type, "error", what);
    assert.equal(body.error.type, type, what);
  }
  assert.equal(provider.requests.length, 0, "nothing reached the provider");
  await gateway.close();
  const problems = (await run.events()).filter((e) => e.type === "telemetry_problem");
  assert.deepEqual(problems.map((p) => p.data.refused), [
    "unauthorized",
    "unauthorized",
    "unauthorized",
    "not_found",
    "malformed",
    "malformed",
    "too_large",
  ]);
  assert.ok(
    problems.every((p) =>
      !JSON.stringify(p).includes(gateway.token) && !JSON.stringify(p).includes("sk-real")
    ),
  );
  assert.deepEqual(gateway.counts.refused, { unauthorized: 3, not_found: 1, malformed: 2, too_large: 1 });
});

Deno.test("a flood of requests without the token is refused, and only the first 50 refusals are recorded", async () => {
  await using provider = startFakeAgentProvider([]);
  await using run = await gatewayRun({ provider: "openai", upstream: provider.openaiBaseUrl });
  for (let i = 0; i < 120; i += 20) {
    await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          fetch(`${run.gateway.openaiUrl}/responses`, { method: "POST", body: "{}" }).then((r) =>
            r.body?.cancel()
          ),
      ),
    );
  }
  await run.gateway.close();
  const problems = (await run.events()).filter((e) => e.type === "telemetry_problem");
  assert.equal(problems.length, 50);
  assert.match(String(problems.at(-1)!.data.problem), /further refusals are counted/);
  assert.equal(run.gateway.counts.refused.unauthorized, 120);
});

Deno.test("a provider's error is passed to the program as the provider said it, and recorded as a failed call", async () => {
  await using provider = startFakeAgentProvider([], {
    faults: { 0: { status: 529, message: "overloaded" } },
  });
  await using run = await gatewayRun({ provider: "anthropic", upstream: provider.url });
  const response = await fetch(`${run.gateway.url}/v1/messages`, {
    method: "POST",
    headers: programHeaders(run.gateway, "anthropic"),
    body: ANTHROPIC_BODY(true),
  });
  assert.equal(response.status, 529);
  assert.equal((await response.json()).error.message, "overloaded");
  await run.gateway.close();
  const failed = (await run.events()).find((e) => e.type === "step_failed")!;
  assert.equal(failed.data.step, "model_called");
  assert.equal(failed.data.error, "ProviderError");
  assert.equal(failed.data.status, 529);
  assert.equal(failed.data.message, "overloaded");
  assert.ok(failed.payload, "the request is kept");
});

Deno.test("garbage from the provider is a 502 in the API's error form, and a failed call that keeps the garbage", async () => {
  await using provider = startFakeAgentProvider([], { faults: { 0: "garbage" } });
  await using run = await gatewayRun({ provider: "openai", upstream: provider.openaiBaseUrl });
  const response = await fetch(`${run.gateway.openaiUrl}/chat/completions`, {
    method: "POST",
    headers: programHeaders(run.gateway, "openai"),
    body: JSON.stringify({ model: "gpt-4o", messages: [] }),
  });
  assert.equal(response.status, 502);
  assert.equal((await response.json()).error.type, "server_error");
  await run.gateway.close();
  const failed = (await run.events()).find((e) => e.type === "step_failed")!;
  assert.equal(failed.data.error, "ProviderGarbage");
  assert.match(decoder.decode(await run.payload(failed.data.response_payload as string)), /502 Bad Gateway/);
});

Deno.test("a stream the provider drops ends with the API's error event for the program, and is recorded with what arrived", async () => {
  await using provider = startFakeAgentProvider([], { faults: { 0: "drop" } });
  await using run = await gatewayRun({ provider: "anthropic", upstream: provider.url });
  const response = await fetch(`${run.gateway.url}/v1/messages`, {
    method: "POST",
    headers: programHeaders(run.gateway, "anthropic"),
    body: ANTHROPIC_BODY(true),
  });
  assert.equal(response.status, 200);
  const text = await response.text();
  assert.match(text, /event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
  await run.gateway.close();
  const failed = (await run.events()).find((e) => e.type === "step_failed")!;
  assert.equal(failed.data.partial, true);
  assert.equal(failed.data.error, "ProviderUnreachable", JSON.stringify(failed.data));
  assert.match(String(failed.data.message), /stream was cut: error reading a body/);
  assert.ok(failed.data.stream_payload, "the bytes that arrived are kept");
  assert.ok(failed.data.response_payload, "what arrived, reassembled, is kept");
});

Deno.test("a provider that never answers is a 504 after the gateway's wait, and one that goes silent mid-stream is cut", async () => {
  await using provider = startFakeAgentProvider([], { faults: { 0: "hang", 1: "silent" } });
  await using run = await gatewayRun({
    provider: "openai",
    upstream: provider.openaiBaseUrl,
    firstByteMs: 300,
    idleMs: 300,
  });
  const send = () =>
    fetch(`${run.gateway.openaiUrl}/responses`, {
      method: "POST",
      headers: programHeaders(run.gateway, "openai"),
      body: JSON.stringify({ model: "gpt-5", stream: true, input: [] }),
    });
  const hung = await send();
  assert.equal(hung.status, 504);
  assert.equal((await hung.json()).error.code, "timeout");
  const silent = await send();
  assert.equal(silent.status, 200);
  assert.match(await silent.text(), /event: response\.failed/);
  await run.gateway.close();
  await provider.close();
  const failed = (await run.events()).filter((e) => e.type === "step_failed");
  assert.deepEqual(failed.map((e) => e.data.error), ["ProviderTimeout", "ProviderTimeout"]);
});

Deno.test("a response over the run's limit is cut, and the call fails with PayloadTooLarge", async () => {
  await using provider = startFakeAgentProvider([], { answer: "x".repeat(20_000) });
  await using run = await gatewayRun({ provider: "anthropic", upstream: provider.url, responseBytes: 4096 });
  for (const stream of [false, true]) {
    const response = await fetch(`${run.gateway.url}/v1/messages`, {
      method: "POST",
      headers: programHeaders(run.gateway, "anthropic"),
      body: ANTHROPIC_BODY(stream),
    });
    // the provider declares its length: the gateway refuses the answer before it passes a byte on
    assert.equal(response.status, 502);
    assert.match(
      (await response.json()).error.message,
      /passed 4096 bytes.*raise agent\.limits\.model_bytes/,
    );
  }
  await run.gateway.close();
  const failed = (await run.events()).filter((e) => e.type === "step_failed");
  assert.deepEqual(failed.map((e) => e.data.error), ["PayloadTooLarge", "PayloadTooLarge"]);
});

Deno.test("more calls at once than the gateway's limit get 429, which the SDKs retry", async () => {
  await using provider = startFakeAgentProvider([], { delayMs: 2000 });
  await using run = await gatewayRun({ provider: "anthropic", upstream: provider.url, concurrent: 2 });
  const send = () =>
    fetch(`${run.gateway.url}/v1/messages`, {
      method: "POST",
      headers: programHeaders(run.gateway, "anthropic"),
      body: ANTHROPIC_BODY(false),
    });
  const first = [send(), send()];
  await new Promise((r) => setTimeout(r, 200));
  const third = await send();
  assert.equal(third.status, 429);
  assert.equal((await third.json()).error.type, "rate_limit_error");
  await provider.close();
  for (const r of await Promise.all(first)) await r.body?.cancel();
});

Deno.test("count_tokens is passed to the provider unrecorded; other paths are not", async () => {
  await using provider = startFakeAgentProvider([]);
  await using run = await gatewayRun({ provider: "anthropic", upstream: provider.url });
  const response = await fetch(`${run.gateway.url}/v1/messages/count_tokens`, {
    method: "POST",
    headers: programHeaders(run.gateway, "anthropic"),
    body: ANTHROPIC_BODY(false),
  });
  assert.deepEqual(await response.json(), { input_tokens: 42 });
  assert.equal(run.gateway.counts.passed, 1);
  await run.gateway.close();
  assert.equal((await run.events()).filter((e) => e.type === "model_called").length, 0);
});
