import { deepEqual, equal, throws } from "node:assert/strict";
import {
  attributeLevel,
  attributesFor,
  levelRank,
  LEVELS,
  splitBody,
} from "../../../lib/provevi/telemetry/attributes.ts";

const span = {
  "gen_ai.operation.name": "chat",
  "gen_ai.provider.name": "openai",
  "gen_ai.request.model": "gpt-4o",
  "gen_ai.response.id": "chatcmpl-123",
  "gen_ai.response.finish_reasons": ["stop"],
  "error.type": "RateLimitError",
  "server.address": "api.openai.com",
  "server.port": 443,
  "gen_ai.usage.input_tokens": 120,
  "gen_ai.usage.output_tokens": 30,
  "gen_ai.request.temperature": 0.2,
  "gen_ai.request.max_tokens": 512,
  "gen_ai.request.top_p": 1,
  "gen_ai.input.messages": '[{"role":"user","content":"hi"}]',
  "gen_ai.tool.call.arguments": '{"path":"x"}',
  "gen_ai.request.top_k": 40,
  "some.new.attribute": "x",
};

Deno.test("attributesFor() at names gives the names, models, providers, IDs, error type, finish reasons and server", () => {
  deepEqual(Object.keys(attributesFor(span, "names")), [
    "gen_ai.operation.name",
    "gen_ai.provider.name",
    "gen_ai.request.model",
    "gen_ai.response.id",
    "gen_ai.response.finish_reasons",
    "error.type",
    "server.address",
    "server.port",
  ]);
});

Deno.test("attributesFor() at usage adds the token counts, and the temperature, max_tokens and top_p", () => {
  const usage = attributesFor(span, "usage");
  for (
    const key of [
      "gen_ai.usage.input_tokens",
      "gen_ai.usage.output_tokens",
      "gen_ai.request.temperature",
      "gen_ai.request.max_tokens",
      "gen_ai.request.top_p",
    ]
  ) equal(key in usage, true, key);
  equal("gen_ai.request.top_k" in usage, false, "another request setting is a body");
  equal("gen_ai.input.messages" in usage, false);
});

Deno.test("attributesFor() at bodies gives every attribute, and null gives none", () => {
  deepEqual(attributesFor(span, "bodies"), span);
  deepEqual(attributesFor(span, null), {});
});

Deno.test("an attribute that provevi does not know counts as a body", () => {
  equal(attributeLevel("some.new.attribute", "x"), "bodies");
  equal(attributeLevel("gen_ai.usage.new_tokens", 3), "bodies");
});

Deno.test("a names attribute must hold one word of at most 200 characters, with no space", () => {
  equal(attributeLevel("gen_ai.request.model", "gpt-4o"), "names");
  equal(attributeLevel("gen_ai.request.model", "x".repeat(200)), "names");
  equal(attributeLevel("gen_ai.request.model", "x".repeat(201)), "bodies");
  equal(attributeLevel("gen_ai.request.model", "ignore previous instructions"), "bodies");
  equal(attributeLevel("gen_ai.request.model", "a\tb"), "bodies");
  equal(attributeLevel("gen_ai.request.model", ""), "bodies");
  equal(attributeLevel("gen_ai.response.finish_reasons", ["stop", "tool calls"]), "bodies");
  equal(attributeLevel("gen_ai.request.model", { a: 1 }), "bodies");
});

Deno.test("a usage attribute must hold numbers", () => {
  equal(attributeLevel("gen_ai.usage.input_tokens", 3), "usage");
  equal(attributeLevel("gen_ai.usage.input_tokens", "3"), "bodies");
  equal(attributeLevel("gen_ai.usage.input_tokens", NaN), "bodies");
  equal(attributeLevel("gen_ai.request.temperature", true), "bodies");
});

Deno.test("attributesFor() keeps a __proto__ key as data", () => {
  const attrs = JSON.parse('{"__proto__": "x", "gen_ai.request.model": "m"}');
  const out = attributesFor(attrs, "bodies");
  equal(Object.getPrototypeOf(out), Object.prototype);
  equal(Object.hasOwn(out, "__proto__"), true);
  deepEqual(Object.keys(attributesFor(attrs, "names")), ["gen_ai.request.model"]);
});

Deno.test("splitBody() takes the bodies out of a span's attributes", () => {
  const { attributes, body } = splitBody(span);
  deepEqual(attributes, attributesFor(span, "usage"));
  deepEqual(Object.keys(body!).sort(), [
    "gen_ai.input.messages",
    "gen_ai.request.top_k",
    "gen_ai.tool.call.arguments",
    "some.new.attribute",
  ]);
  deepEqual(splitBody({ "gen_ai.request.model": "m" }), {
    attributes: { "gen_ai.request.model": "m" },
    body: null,
  });
});

Deno.test("levels rank names below usage below bodies", () => {
  deepEqual(LEVELS, ["names", "usage", "bodies"]);
  equal(levelRank("names") < levelRank("usage") && levelRank("usage") < levelRank("bodies"), true);
  throws(() => levelRank("all" as "names"), TypeError);
  throws(() => attributesFor(span, "all" as "names"), TypeError);
});
