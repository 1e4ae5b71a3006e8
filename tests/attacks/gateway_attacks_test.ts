/**
 * Attacks on the model gateway, by class: who may call it (only the run's token, in a header, compared whole),
 * where it forwards (only the run's provider, whatever the request names), what it forwards (no credential or
 * identity of the caller's; the real key added), what it reads (bodies bounded before and after decoding, JSON
 * that names a model), what it takes back (bounded, cut when silent, garbage refused, held by its bytes and not by a read's buffer per chunk), and floods (bounded
 * records and calls at once). Each is refused with the status the program's SDK understands, and recorded.
 * @module
 */
import assert from "node:assert/strict";
import { startFakeAgentProvider } from "../../fixtures/providers/fake_agent_provider.ts";
import { startFlood } from "../../fixtures/attacks/flood_provider.ts";
import { gatewayRun, programHeaders } from "../provrun/gateway/_gateway.ts";
import { Tally } from "./_tally.ts";
import { isolateBytes } from "../_memory.ts";

const tally = new Tally("model gateway attacks");
const BODY = JSON.stringify({
  model: "claude-sonnet-4-5",
  max_tokens: 10,
  messages: [{ role: "user", content: "hi" }],
});

/** Sends raw bytes to the gateway over TCP (what fetch would not let a test send: an absolute-form target). */
async function raw(port: number, text: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(text));
    const buf = new Uint8Array(65536);
    const n = await conn.read(buf);
    return new TextDecoder().decode(buf.subarray(0, n ?? 0));
  } finally {
    conn.close();
  }
}

Deno.test("who may call: only the run's token, whole, in a header; the real key, a prefix, a longer token, a token in the query are refused and recorded", async () => {
  await using provider = startFakeAgentProvider([]);
  await using run = await gatewayRun({ provider: "anthropic", upstream: provider.url });
  const { gateway } = run;
  const t = gateway.token;
  const attempts: [string, string, HeadersInit][] = [
    ["no credentials", "/v1/messages", {}],
    ["an empty bearer", "/v1/messages", { authorization: "Bearer " }],
    ["the real provider key", "/v1/messages", { "x-api-key": "sk-real-key" }],
    ["a prefix of the token", "/v1/messages", { "x-api-key": t.slice(0, -1) }],
    ["the token and more", "/v1/messages", { "x-api-key": `${t}0` }],
    ["the token in other case", "/v1/messages", { "x-api-key": t.toUpperCase() }],
    ["the token in the query", `/v1/messages?key=${t}&api_key=${t}`, {}],
    ["a wrong x-api-key beside a right bearer", "/v1/messages", {
      "x-api-key": "x",
      authorization: `Bearer ${t}`,
    }],
  ];
  for (const [name, path, headers] of attempts) {
    const r = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: BODY,
    });
    const body = await r.json();
    tally.add(name, {
      stopped: r.status === 401 && body.error.type === "authentication_error",
      recorded: true,
    });
    assert.equal(r.status, 401, name);
  }
  assert.equal(provider.requests.length, 0);
  await gateway.close();
  const recorded = (await run.events()).filter((e) =>
    e.type === "telemetry_problem" && e.data.refused === "unauthorized"
  );
  assert.equal(recorded.length, attempts.length);
});

Deno.test("where it forwards: an absolute-form target or another Host is refused (421) before the token, and a path that climbs or is encoded reaches only the run's provider or nothing", async () => {
  await using provider = startFakeAgentProvider([]);
  await using elsewhere = startFakeAgentProvider([]);
  await using run = await gatewayRun({ provider: "anthropic", upstream: provider.url });
  const { gateway } = run;
  const port = Number(new URL(gateway.url).port);
  const other = new URL(elsewhere.url).host;
  const request = (target: string, host: string) =>
    `POST ${target} HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${gateway.token}\r\ncontent-type: application/json\r\n` +
    `content-length: ${BODY.length}\r\nconnection: close\r\n\r\n${BODY}`;
  const answers = [
    [
      "an absolute-form target naming another server",
      await raw(port, request(`http://${other}/v1/messages`, other)),
    ],
    ["a Host header naming another server", await raw(port, request("/v1/messages", other))],
  ] as const;
  for (const [name, answer] of answers) {
    const ok = elsewhere.requests.length === 0 && provider.requests.length === 0 &&
      /^HTTP\/1\.1 421/.test(answer);
    tally.add(name, { stopped: ok, recorded: ok });
    assert.ok(ok, `${name}: ${answer.slice(0, 200)}`);
  }
  for (
    const path of [
      "/v1/messages/../../admin",
      "/v1/%2e%2e/%2e%2e/admin",
      "/v1/messages%2f..%2fadmin",
      "//evil.example/v1/messages",
    ]
  ) {
    const r = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: programHeaders(gateway, "anthropic"),
      body: BODY,
    });
    await r.body?.cancel();
    const stopped = r.status === 404 ||
      (r.status === 200 && provider.requests.at(-1)?.path === "/v1/messages");
    tally.add(`the path ${path}`, { stopped: stopped && elsewhere.requests.length === 0, recorded: true });
    assert.ok(stopped, `${path}: ${r.status}`);
  }
  assert.equal(elsewhere.requests.length, 0);
  assert.ok(provider.requests.every((r) => r.path === "/v1/messages"));
});

Deno.test("a web page cannot reach the gateway: DNS rebinding (another Host), an Origin or Sec-Fetch-Site of another site are refused before the token, counted, and write nothing into the evidence", async () => {
  await using provider = startFakeAgentProvider([]);
  await using run = await gatewayRun({ provider: "anthropic", upstream: provider.url });
  const { gateway } = run;
  const port = Number(new URL(gateway.url).port);
  const request = (extra: string, host = `127.0.0.1:${port}`) =>
    `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${gateway.token}\r\n${extra}` +
    `content-type: text/plain\r\ncontent-length: ${BODY.length}\r\nconnection: close\r\n\r\n${BODY}`;
  const attacks: [string, string, number][] = [
    ["DNS rebinding (Host: evil.example:PORT)", request("", `evil.example:${port}`), 421],
    ["a Host of another port of 127.0.0.1", request("", `127.0.0.1:${port + 1}`), 421],
    ["no Host at all", request("", ""), 421],
    ["a cross-site page (Origin: https://evil.example)", request("origin: https://evil.example\r\n"), 403],
    ["a page of another port (Origin: http://127.0.0.1:1)", request("origin: http://127.0.0.1:1\r\n"), 403],
    [
      "a page that sends no Origin (Sec-Fetch-Site: cross-site)",
      request("sec-fetch-site: cross-site\r\n"),
      403,
    ],
  ];
  for (const [name, text, status] of attacks) {
    const answer = await raw(port, text);
    const stopped = new RegExp(`^HTTP/1\\.1 ${status}`).test(answer) && provider.requests.length === 0;
    tally.add(name, { stopped, recorded: true });
    assert.ok(stopped, `${name}: ${answer.slice(0, 200)}`);
  }
  await gateway.close();
  const counted = (gateway.counts.refused.wrong_host ?? 0) + (gateway.counts.refused.cross_site ?? 0);
  const written = (await run.events()).filter((e) => e.type === "telemetry_problem").length;
  tally.add("web page refusals counted, not written", {
    stopped: written === 0,
    recorded: counted === attacks.length,
  });
  assert.deepEqual([counted, written], [attacks.length, 0]);
});

Deno.test("what it forwards: the caller's credentials, organization, cookies and forwarding headers never reach the provider; the real key does", async () => {
  const seen: Headers[] = [];
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    seen.push(req.headers);
    return Response.json({
      id: "chatcmpl-1",
      object: "chat.completion",
      model: "gpt-4o",
      choices: [],
      usage: {},
    });
  });
  try {
    await using run = await gatewayRun({
      provider: "openai",
      upstream: `http://127.0.0.1:${upstream.addr.port}/v1`,
    });
    const r = await fetch(`${run.gateway.openaiUrl}/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${run.gateway.token}`,
        "x-api-key": run.gateway.token,
        "api-key": "sk-azure-style",
        "openai-organization": "org-attacker",
        "openai-project": "proj-attacker",
        cookie: "session=stolen",
        "x-forwarded-for": "10.0.0.1",
        "x-forwarded-host": "evil.example",
        forwarded: "for=10.0.0.1",
        "content-type": "application/json",
      },
      body: JSON.stringify({ model: "gpt-4o", messages: [] }),
    });
    await r.body?.cancel();
    const h = seen[0]!;
    const clean = h.get("authorization") === "Bearer sk-real-key" && !h.get("x-api-key") &&
      !h.get("api-key") &&
      !h.get("openai-organization") && !h.get("openai-project") && !h.get("cookie") &&
      !h.get("x-forwarded-for") && !h.get("x-forwarded-host") && !h.get("forwarded") &&
      ![...h.values()].some((v) => v.includes(run.gateway.token));
    tally.add("the caller's credentials and identity headers", { stopped: clean, recorded: clean });
    assert.ok(clean, JSON.stringify([...h]));
  } finally {
    await upstream.shutdown();
  }
});

Deno.test("what it reads: a body over the limit (declared, chunked, or a gzip bomb), an unknown encoding, JSON that names no model or nests past reason: refused, recorded, the provider untouched", async () => {
  await using provider = startFakeAgentProvider([]);
  await using run = await gatewayRun({
    provider: "anthropic",
    upstream: provider.url,
    requestBytes: 64 * 1024,
  });
  const { gateway } = run;
  const headers = programHeaders(gateway, "anthropic") as Record<string, string>;
  let sent = 0;
  const chunked = new ReadableStream<Uint8Array>({
    pull(c) {
      // 8 MB in pieces, with no declared length: the gateway counts as it reads
      if ((sent += 16 * 1024) > 8 * 1024 * 1024) c.close();
      else c.enqueue(new Uint8Array(16 * 1024).fill(32));
    },
  });
  const bomb = await new Response(
    new Blob([new Uint8Array(64 * 1024 * 1024).fill(32)]).stream().pipeThrough(new CompressionStream("gzip")),
  ).arrayBuffer();
  const attempts: [string, Promise<Response>, number][] = [
    [
      "a declared 1 GB body",
      raw(
        Number(new URL(gateway.url).port),
        `POST /v1/messages HTTP/1.1\r\nHost: ${
          new URL(gateway.url).host
        }\r\nx-api-key: ${gateway.token}\r\n` +
          `content-length: 1073741824\r\n\r\n{`,
      ).then((t) => new Response(null, { status: Number(t.slice(9, 12)) })),
      413,
    ],
    [
      "a chunked body past the limit",
      fetch(`${gateway.url}/v1/messages`, { method: "POST", headers, body: chunked }),
      413,
    ],
    [
      "a gzip bomb (64 MB in a small body)",
      fetch(`${gateway.url}/v1/messages`, {
        method: "POST",
        headers: { ...headers, "content-encoding": "gzip" },
        body: bomb,
      }),
      413,
    ],
    [
      "a body in zstd",
      fetch(`${gateway.url}/v1/messages`, {
        method: "POST",
        headers: { ...headers, "content-encoding": "zstd" },
        body: "x",
      }),
      415,
    ],
    ["a JSON list", fetch(`${gateway.url}/v1/messages`, { method: "POST", headers, body: "[1,2]" }), 400],
    [
      "a model that is not a text",
      fetch(`${gateway.url}/v1/messages`, { method: "POST", headers, body: '{"model":{"$ne":1}}' }),
      400,
    ],
    [
      "JSON nested 30,000 deep",
      fetch(`${gateway.url}/v1/messages`, {
        method: "POST",
        headers,
        body: "[".repeat(30_000) + "]".repeat(30_000),
      }),
      400,
    ],
    [
      "a body that is not UTF-8",
      fetch(`${gateway.url}/v1/messages`, {
        method: "POST",
        headers,
        body: new Uint8Array([0xff, 0xfe, 0x7b]),
      }),
      400,
    ],
  ];
  for (const [name, answer, status] of attempts) {
    const r = await answer.catch(() => new Response(null, { status: 413 })); // a reset after refusing a stream
    await r.body?.cancel();
    tally.add(name, { stopped: r.status === status, recorded: true });
    assert.equal(r.status, status, name);
  }
  assert.equal(provider.requests.length, 0);
  await gateway.close();
  const refused = (await run.events()).filter((e) => e.type === "telemetry_problem").map((e) =>
    e.data.refused
  );
  assert.deepEqual(refused, [
    "too_large",
    "too_large",
    "too_large",
    "unsupported_encoding",
    "malformed",
    "malformed",
    "malformed",
    "malformed",
  ]);
});

Deno.test("what it takes back: a provider that floods 300 MB is cut at the run's limit while it arrives, memory bounded, and the call recorded as failed", async () => {
  await using flood = startFlood();
  await using run = await gatewayRun({
    provider: "openai",
    upstream: flood.baseUrl,
    responseBytes: 4 * 1024 * 1024,
  });
  const before = isolateBytes();
  for (const model of ["text", "args"]) {
    const r = await fetch(`${run.gateway.openaiUrl}/chat/completions`, {
      method: "POST",
      headers: programHeaders(run.gateway, "openai"),
      body: JSON.stringify({ model, stream: model === "text", messages: [] }),
    });
    const text = await r.text();
    const cut = flood.sent < 64 * 1024 * 1024 && (r.status === 502 || /"bad_gateway"/.test(text.slice(-500)));
    tally.add(`a 300 MB ${model === "text" ? "stream" : "body"}`, { stopped: cut, recorded: true });
    assert.ok(cut, `${model}: ${r.status} after ${flood.sent} bytes`);
  }
  assert.ok(isolateBytes() - before < 256 * 1024 * 1024);
  await run.gateway.close();
  const failed = (await run.events()).filter((e) => e.type === "step_failed");
  assert.deepEqual(failed.map((e) => e.data.error), ["PayloadTooLarge", "PayloadTooLarge"]);
});

/**
 * A provider that streams `count` small events, each on its own (a turn of the event loop between them), then
 * waits for `go` before its last event: while it waits, the gateway holds every chunk it has kept for the record.
 */
function trickle(count: number, go: Promise<void>): Deno.HttpServer<Deno.NetAddr> {
  const encoder = new TextEncoder();
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    await request.arrayBuffer();
    const stream = new ReadableStream<Uint8Array>({
      async start(c) {
        for (let i = 0; i < count; i++) {
          c.enqueue(encoder.encode(`data: {"type":"ping","n":${i}}\n\n`));
          await new Promise((r) => setTimeout(r, 0));
        }
        await go;
        c.enqueue(encoder.encode(`event: message_stop\ndata: {"type":"message_stop"}\n\n`));
        c.close();
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  });
}

Deno.test("what it keeps: a provider that sends its stream in thousands of tiny chunks makes the gateway hold those bytes, not a 64 KiB buffer per chunk", async () => {
  const count = 2000;
  let go!: () => void;
  const provider = trickle(count, new Promise((resolve) => (go = resolve)));
  await using run = await gatewayRun({
    provider: "anthropic",
    upstream: `http://127.0.0.1:${provider.addr.port}`,
  });
  try {
    const before = isolateBytes();
    const r = await fetch(`${run.gateway.url}/v1/messages`, {
      method: "POST",
      headers: programHeaders(run.gateway, "anthropic"),
      body: JSON.stringify({ model: "claude-sonnet-4-5", stream: true, messages: [] }),
    });
    // the program reads into one buffer of its own, so that what is measured is what the gateway holds
    const reader = r.body!.getReader({ mode: "byob" });
    let buffer = new ArrayBuffer(64 * 1024);
    let text = "";
    const decoder = new TextDecoder();
    while (!text.includes(`"n":${count - 1}}`)) {
      const step = await reader.read(new Uint8Array(buffer));
      buffer = step.value!.buffer as ArrayBuffer;
      if (step.done) break;
      text = (text + decoder.decode(step.value!)).slice(-200);
    }
    const held = isolateBytes() - before;
    go();
    for (;;) { // the last event, then the end
      const step = await reader.read(new Uint8Array(buffer));
      if (step.done) break;
      buffer = step.value!.buffer as ArrayBuffer;
    }
    // 2,000 chunks of about 30 bytes; a 64 KiB buffer kept with each would be 125 MiB
    const bounded = held < 48 * 1024 * 1024;
    await run.gateway.close();
    const called = (await run.events()).filter((e) => e.type === "model_called");
    tally.add("a stream in 2,000 tiny chunks", { stopped: bounded, recorded: called.length === 1 });
    assert.ok(bounded, `the gateway held ${(held / 1024 / 1024).toFixed(1)} MiB for ${count} tiny chunks`);
    assert.equal(called.length, 1, "the call is recorded whole");
  } finally {
    go();
    await provider.shutdown();
  }
});

Deno.test("what it keeps: a program that sends its request body in thousands of tiny chunks makes the gateway hold those bytes, not a 64 KiB buffer per chunk", async () => {
  await using provider = startFakeAgentProvider([]);
  await using run = await gatewayRun({ provider: "anthropic", upstream: provider.url });
  const encoder = new TextEncoder();
  const count = 2000;
  let sent = 0;
  let go!: () => void;
  const paused = new Promise<void>((resolve) => (go = resolve));
  let waiting!: () => void;
  const atLast = new Promise<void>((resolve) => (waiting = resolve));
  // a request whose body comes a few bytes at a time, each on its own, and whose end waits for `go`
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (sent === 0) {
        c.enqueue(encoder.encode(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[],"pad":"`));
      } else if (sent < count) c.enqueue(encoder.encode("x".repeat(16)));
      else {
        waiting();
        await paused;
        c.enqueue(encoder.encode(`"}`));
        c.close();
      }
      sent++;
      await new Promise((r) => setTimeout(r, 0));
    },
  }, { highWaterMark: 0 });
  const before = isolateBytes();
  const answer = fetch(`${run.gateway.url}/v1/messages`, {
    method: "POST",
    headers: programHeaders(run.gateway, "anthropic"),
    body,
  });
  await atLast;
  await new Promise((r) => setTimeout(r, 500)); // the gateway reads what was sent
  const held = isolateBytes() - before;
  go();
  const r = await answer;
  await r.arrayBuffer();
  // 2,000 chunks of 16 bytes; a 64 KiB buffer kept with each would be 125 MiB
  const bounded = held < 48 * 1024 * 1024;
  await run.gateway.close();
  const called = (await run.events()).filter((e) => e.type === "model_called");
  tally.add("a request body in 2,000 tiny chunks", { stopped: bounded, recorded: called.length === 1 });
  assert.ok(bounded, `the gateway held ${(held / 1024 / 1024).toFixed(1)} MiB for ${count} tiny chunks`);
  assert.equal(r.status, 200);
  assert.equal(called.length, 1, "the call is forwarded and recorded");
});

Deno.test("floods: a thousand requests without the token are refused with fifty recorded, and calls past the limit at once get 429", async () => {
  await using provider = startFakeAgentProvider([], { delayMs: 1500 });
  await using run = await gatewayRun({ provider: "anthropic", upstream: provider.url, concurrent: 4 });
  const before = isolateBytes();
  for (let i = 0; i < 1000; i += 50) {
    await Promise.all(
      Array.from(
        { length: 50 },
        () =>
          fetch(`${run.gateway.url}/v1/messages`, { method: "POST", body: BODY }).then((r) =>
            r.body?.cancel()
          ),
      ),
    );
  }
  const calls = Array.from(
    { length: 8 },
    () =>
      fetch(`${run.gateway.url}/v1/messages`, {
        method: "POST",
        headers: programHeaders(run.gateway, "anthropic"),
        body: BODY,
      }),
  );
  const statuses = await Promise.all(calls.map(async (c) => {
    const r = await c;
    await r.body?.cancel();
    return r.status;
  }));
  await run.gateway.close();
  const problems = (await run.events()).filter((e) => e.type === "telemetry_problem");
  const bounded = problems.length === 50 && isolateBytes() - before < 128 * 1024 * 1024;
  tally.add("a thousand requests without the token", {
    stopped: run.gateway.counts.refused.unauthorized === 1000,
    recorded: bounded,
  });
  tally.add("eight calls at once past a limit of four", {
    stopped: statuses.filter((s) => s === 429).length === 4,
    recorded: true,
  });
  assert.ok(bounded, `${problems.length} problems recorded`);
  assert.deepEqual(statuses.sort(), [200, 200, 200, 200, 429, 429, 429, 429]);
});

Deno.test("the model gateway attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});
