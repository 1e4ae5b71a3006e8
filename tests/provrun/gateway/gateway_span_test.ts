/**
 * The gateway's `chat` span attributes from each provider API's request and response, as the GenAI conventions
 * (v1.41.1) name them; the program runs (tests/provrun/telemetry/genai_programs_test.ts) count them on real
 * Claude Code and Codex calls, which set few settings, so every API's settings are checked here.
 */
import assert from "node:assert/strict";
import {
  chatEndAttributes,
  chatRequestAttributes,
  gatewaySpanContext,
  offeredTools,
} from "../../../lib/provrun/gateway/gateway_span.ts";

const context = gatewaySpanContext("openai-compatible", {
  upstream: "https://api.groq.com/openai/v1",
  conversationId: "conv-7",
});

Deno.test("the gateway's span names the provider and server behind it, well-known by its host", () => {
  assert.deepEqual(context, {
    provider: "groq",
    address: "api.groq.com",
    port: 443,
    conversationId: "conv-7",
  });
  assert.deepEqual(
    gatewaySpanContext("anthropic", { upstream: "http://127.0.0.1:8080", conversationId: null }),
    {
      provider: "anthropic",
      address: "127.0.0.1",
      port: 8080,
      conversationId: null,
    },
  );
  assert.equal(gatewaySpanContext("openai", { upstream: "not a url", conversationId: null }).address, null);
});

Deno.test("an OpenAI Chat request's settings become the conventions' request attributes", () => {
  const body = {
    model: "gpt-4o",
    max_completion_tokens: 256,
    max_tokens: 999,
    temperature: 0,
    top_p: 0.5,
    frequency_penalty: 0.1,
    presence_penalty: 0.2,
    seed: 7,
    stop: "END",
    stream: true,
  };
  const a = chatRequestAttributes("openai-chat", { body, model: "gpt-4o", context });
  assert.deepEqual(a, {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "groq",
    "gen_ai.request.model": "gpt-4o",
    "server.address": "api.groq.com",
    "server.port": 443,
    "gen_ai.request.max_tokens": 256, // the newer field wins
    "gen_ai.request.temperature": 0,
    "gen_ai.request.top_p": 0.5,
    "gen_ai.request.frequency_penalty": 0.1,
    "gen_ai.request.presence_penalty": 0.2,
    "gen_ai.request.seed": 7,
    "gen_ai.request.stop_sequences": ["END"],
    "gen_ai.request.stream": true,
    "gen_ai.conversation.id": "conv-7",
  });
});

Deno.test("Anthropic's and OpenAI Responses' settings are read by their own names; what is not sent is left out", () => {
  const anthropic = chatRequestAttributes("anthropic-messages", {
    body: { max_tokens: 32000, top_k: 40, stop_sequences: ["\n\nHuman:"], seed: 1, frequency_penalty: 1 },
    model: "claude-sonnet-4-5",
    context,
  });
  assert.equal(anthropic["gen_ai.request.max_tokens"], 32000);
  assert.equal(anthropic["gen_ai.request.top_k"], 40);
  assert.deepEqual(anthropic["gen_ai.request.stop_sequences"], ["\n\nHuman:"]);
  // Anthropic's API has no seed and no penalties: a field it does not define is not read as one
  assert.equal(anthropic["gen_ai.request.seed"], undefined);
  assert.equal(anthropic["gen_ai.request.frequency_penalty"], undefined);
  assert.equal(anthropic["gen_ai.request.stream"], undefined);
  const responses = chatRequestAttributes("openai-responses", {
    body: { max_output_tokens: 100, temperature: "hot", top_p: Number.NaN },
    model: "gpt-fake",
    context,
  });
  assert.equal(responses["gen_ai.request.max_tokens"], 100);
  assert.equal(responses["gen_ai.request.temperature"], undefined, "a setting that is not a number");
  for (const body of [null, [], "text", undefined]) {
    assert.equal(
      chatRequestAttributes("openai-chat", { body, model: null, context })["gen_ai.request.model"],
      undefined,
    );
  }
});

Deno.test("the end of a call: the conventions' finish reasons, every token count, and the first chunk of a stream", () => {
  const usage = { input: 21, output: 7, cacheRead: 3, cacheWrite: 2, reasoning: 5 };
  const summary = {
    id: "msg_1",
    model: null,
    usage,
    finish: "tool-calls",
    providerFinish: "tool_use",
    toolCalls: [],
  };
  assert.deepEqual(chatEndAttributes(summary, { model: "asked", firstChunk: 0.25 }), {
    "gen_ai.response.model": "asked",
    "gen_ai.response.id": "msg_1",
    "gen_ai.usage.input_tokens": 21,
    "gen_ai.usage.output_tokens": 7,
    "gen_ai.usage.cache_read.input_tokens": 3,
    "gen_ai.usage.cache_creation.input_tokens": 2,
    "gen_ai.usage.reasoning.output_tokens": 5,
    "gen_ai.response.finish_reasons": ["tool_call"],
    "gen_ai.response.time_to_first_chunk": 0.25,
  });
  const plain = chatEndAttributes({ ...summary, id: null, finish: "stop" }, {
    model: null,
    firstChunk: null,
  });
  assert.equal(plain["gen_ai.response.id"], undefined);
  assert.equal(plain["gen_ai.response.time_to_first_chunk"], undefined);
});

Deno.test("the tools a request offered, with their descriptions, in each API's shape", () => {
  assert.deepEqual(
    offeredTools({
      tools: [
        { name: "Read", description: "Reads a file." }, // Anthropic, OpenAI Responses
        { type: "function", function: { name: "exec_command", description: "Runs a command." } }, // OpenAI Chat
        { type: "web_search" }, // a provider's tool: no description
        "junk",
      ],
    }),
    [["Read", "Reads a file."], ["exec_command", "Runs a command."]],
  );
  assert.deepEqual(offeredTools(undefined), []);
  assert.deepEqual(offeredTools({ tools: "no" }), []);
});
