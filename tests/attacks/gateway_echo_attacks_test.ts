/**
 * Attacks on the model gateway from the provider's side, by class: a provider (or a proxy in front of it, or an
 * `openai-compatible` server) that echoes the request's credentials back, in a response header, in an error's
 * body, in an answer, split across a stream's chunks, or on the requests the gateway passes on unrecorded
 * (`count_tokens`, `models`). The real key must reach neither the program (which holds only the run's token)
 * nor the evidence. And those passed-on requests are bounded like the model calls, and a gzip bomb of the
 * provider's is cut as it is unpacked: a flood is cut at the run's
 * limit while it arrives.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startFlood } from "../../fixtures/attacks/flood_provider.ts";
import { gatewayRun, programHeaders } from "../provrun/gateway/_gateway.ts";
import { ModelKeyMissing } from "../../lib/provrun/run/errors.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("model gateway echo attacks");
const KEY = "sk-real-key-0123456789abcdefghijklmnopqrstuvwxyz";
const encoder = new TextEncoder();

/** True when some file of the run's folder holds the key. */
async function evidenceHoldsKey(folder: string): Promise<boolean> {
  const walk = async (dir: string): Promise<boolean> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory && await walk(path)) return true;
      if (entry.isFile && new TextDecoder().decode(await Deno.readFile(path)).includes(KEY)) return true;
    }
    return false;
  };
  return await walk(folder);
}

/** The key the request carried, as a provider that echoes it would find it. */
function keyOf(req: Request): string {
  return req.headers.get("x-api-key") ?? (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
}

/** A stream of chunks with a pause between each, so that each arrives on its own. */
function paced(chunks: string[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i === chunks.length) return controller.close();
      if (i > 0) await new Promise((r) => setTimeout(r, 30));
      controller.enqueue(encoder.encode(chunks[i++]!));
    },
  }, { highWaterMark: 0 });
}

/** An echoing provider: what each model answers is decided by `answer`, given the key the request carried. */
function echoServer(answer: (req: Request, key: string, body: string) => Response) {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.text();
    return answer(req, keyOf(req), body);
  });
}

function chatAnswer(content: string) {
  return {
    id: "chatcmpl-echo",
    object: "chat.completion",
    created: 1764417600,
    model: "gpt-4o",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

function chunk(content: string, finish: string | null = null): string {
  return JSON.stringify({
    id: "chatcmpl-echo",
    object: "chat.completion.chunk",
    created: 1764417600,
    model: "gpt-4o",
    choices: [{ index: 0, delta: { content }, finish_reason: finish }],
  });
}

Deno.test("a provider that echoes the key: in a header, an error's body, an answer, a stream split inside the key, on a passed-on request; the key reaches neither the program nor the evidence", async () => {
  const upstream = echoServer((req, key, body) => {
    const model = req.method === "POST" ? JSON.parse(body).model : "models";
    const headers = { "x-echo-key": key, "www-authenticate": `Bearer realm="x", key="${key}"` };
    if (model === "error") {
      return Response.json(
        { error: { message: `Incorrect API key provided: ${key}. Headers: authorization=Bearer ${key}` } },
        { status: 401, headers },
      );
    }
    if (model === "answer") return Response.json(chatAnswer(`the key is ${key}.`), { headers });
    if (model === "models") {
      return Response.json({ object: "list", data: [{ id: `gpt-4o ${key}` }] }, { headers });
    }
    const at = 9; // the stream is cut inside the key: its first bytes in one chunk, the rest in the next
    const first = `data: ${chunk(`the key is ${key}`)}\n\n`;
    const split = first.indexOf(key) + at;
    return new Response(
      paced([
        first.slice(0, split),
        first.slice(split),
        `data: ${chunk(key.slice(0, 20))}\n\n`,
        `data: ${chunk(key.slice(20), "stop")}\n\ndata: [DONE]\n\n`,
      ]),
      { headers: { ...headers, "content-type": "text/event-stream" } },
    );
  });
  try {
    await using run = await gatewayRun({
      provider: "openai",
      upstream: `http://127.0.0.1:${upstream.addr.port}/v1`,
      key: KEY,
    });
    const leaks: string[] = [];
    for (const model of ["error", "answer", "stream", "models"]) {
      const r = model === "models"
        ? await fetch(`${run.gateway.openaiUrl}/models`, { headers: programHeaders(run.gateway, "openai") })
        : await fetch(`${run.gateway.openaiUrl}/chat/completions`, {
          method: "POST",
          headers: programHeaders(run.gateway, "openai"),
          body: JSON.stringify({ model, stream: model === "stream", messages: [] }),
        });
      const text = await r.text();
      const leaked = text.includes(KEY) || [...r.headers.values()].some((v) => v.includes(KEY));
      if (leaked) leaks.push(`${model}: ${[...r.headers].join(" ")} ${text.slice(0, 300)}`);
      tally.add(`the key echoed (${model}) to the program`, { stopped: !leaked, recorded: true });
    }
    await run.gateway.close();
    const inEvidence = await evidenceHoldsKey(run.folder);
    tally.add("the key echoed into the evidence", { stopped: !inEvidence, recorded: !inEvidence });
    const events = await run.events();
    const calls = events.filter((e) => e.type === "model_called" || e.type === "step_failed");
    assert.equal(calls.length, 3, "each model call is still recorded");
    assert.deepEqual(leaks, []);
    assert.ok(!inEvidence, "the key is in the run's evidence");
  } finally {
    await upstream.shutdown();
  }
});

Deno.test("a provider that echoes the key, Anthropic's way: x-api-key in an error and in a message; neither the program nor the evidence gets it", async () => {
  const upstream = echoServer((_req, key, body) => {
    const model = JSON.parse(body).model;
    if (model === "error") {
      return Response.json({
        type: "error",
        error: { type: "authentication_error", message: `invalid x-api-key ${key}` },
      }, { status: 401, headers: { "x-echo": key } });
    }
    return Response.json({
      id: "msg_echo",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: `x-api-key: ${key}` }],
      stop_reason: "end_turn",
      usage: { input_tokens: 1, output_tokens: 1 },
    }, { headers: { "x-echo": key } });
  });
  try {
    await using run = await gatewayRun({
      provider: "anthropic",
      upstream: `http://127.0.0.1:${upstream.addr.port}`,
      key: KEY,
    });
    for (const model of ["error", "message", "count"]) {
      const path = model === "count" ? "/v1/messages/count_tokens" : "/v1/messages";
      const r = await fetch(`${run.gateway.url}${path}`, {
        method: "POST",
        headers: programHeaders(run.gateway, "anthropic"),
        body: JSON.stringify({ model, max_tokens: 5, messages: [] }),
      });
      const text = await r.text();
      const leaked = text.includes(KEY) || [...r.headers.values()].some((v) => v.includes(KEY));
      tally.add(`the key echoed (anthropic ${model}) to the program`, { stopped: !leaked, recorded: true });
      assert.ok(!leaked, `${model}: ${text.slice(0, 300)}`);
    }
    await run.gateway.close();
    const inEvidence = await evidenceHoldsKey(run.folder);
    tally.add("the key echoed (anthropic) into the evidence", {
      stopped: !inEvidence,
      recorded: !inEvidence,
    });
    assert.ok(!inEvidence);
  } finally {
    await upstream.shutdown();
  }
});

Deno.test("a passed-on request (GET /v1/models) whose provider floods 300 MB is cut at the run's limit while it arrives", async () => {
  await using flood = startFlood();
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () =>
    // the flood server answers a POST whose model is `args`; pass the GET on to it as such
    fetch(`${flood.baseUrl}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "args" }) }));
  try {
    await using run = await gatewayRun({
      provider: "openai",
      upstream: `http://127.0.0.1:${upstream.addr.port}/v1`,
      responseBytes: 4 * 1024 * 1024,
    });
    const r = await fetch(`${run.gateway.openaiUrl}/models`, {
      headers: programHeaders(run.gateway, "openai"),
    });
    const text = await r.text();
    const cut = flood.sent < 64 * 1024 * 1024 && r.status === 502;
    tally.add("a 300 MB answer to GET /v1/models", { stopped: cut, recorded: true });
    assert.ok(cut, `${r.status} after ${flood.sent} bytes, ${text.slice(0, 200)}`);
  } finally {
    await upstream.shutdown();
  }
});

Deno.test("a provider's gzip bomb (32 MB of zeros in a small body, as JSON and as a stream) is cut at the run's limit as it is unpacked, and recorded as failed", async () => {
  // Made a megabyte at a time, so that the test itself never holds the 32 MB it unpacks to.
  let made = 0;
  const zeros = new ReadableStream<BufferSource>({
    pull(c) {
      if (made++ === 32) c.close();
      else c.enqueue(new Uint8Array(1024 * 1024).fill(0x20));
    },
  });
  const bomb = new Uint8Array(
    await new Response(zeros.pipeThrough(new CompressionStream("gzip"))).arrayBuffer(),
  );
  const upstream = echoServer((_req, _key, body) =>
    new Response(bomb, {
      headers: {
        "content-encoding": "gzip",
        "content-type": JSON.parse(body).stream ? "text/event-stream" : "application/json",
      },
    })
  );
  try {
    await using run = await gatewayRun({
      provider: "openai",
      upstream: `http://127.0.0.1:${upstream.addr.port}/v1`,
      responseBytes: 1024 * 1024,
    });
    for (const stream of [false, true]) {
      const r = await fetch(`${run.gateway.openaiUrl}/chat/completions`, {
        method: "POST",
        headers: programHeaders(run.gateway, "openai"),
        body: JSON.stringify({ model: "gpt-4o", stream, messages: [] }),
      });
      const text = await r.text();
      const cut = r.status === 502 || /bad_gateway|passed 1048576 bytes/.test(text.slice(-600));
      tally.add(`a gzip bomb from the provider (${stream ? "stream" : "JSON"})`, {
        stopped: cut,
        recorded: true,
      });
      assert.ok(cut, `${r.status} ${text.slice(-300)}`);
    }
    await run.gateway.close();
    const failed = (await run.events()).filter((e) => e.type === "step_failed").map((e) => e.data.error);
    assert.deepEqual(failed, ["PayloadTooLarge", "PayloadTooLarge"]);
  } finally {
    await upstream.shutdown();
  }
});

Deno.test("a key a header cannot carry (a line break and a header after it) is refused at the start in one line that names no key, never a bare 500 per call", async () => {
  const bad = `${KEY}\r\nx-evil: 1`;
  const refused = await gatewayRun({
    provider: "anthropic",
    upstream: "http://127.0.0.1:9",
    key: bad,
    keyVariable: "ANTHROPIC_API_KEY",
  }).then(async (run) => (await run[Symbol.asyncDispose](), null), (e) => e);
  const stopped = refused instanceof ModelKeyMissing && /ANTHROPIC_API_KEY/.test(refused.message) &&
    !refused.message.includes(KEY) && !refused.message.includes("\n");
  tally.add("a key with a line break and a header after it", { stopped, recorded: stopped });
  assert.ok(stopped, String(refused));
});

Deno.test("the model gateway echo attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});
