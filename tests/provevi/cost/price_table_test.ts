import assert from "node:assert/strict";
import { PriceTable } from "../../../lib/provevi/cost/price_table.ts";
import { parseCost } from "../../../lib/provevi/cost/call_cost.ts";
import { callCost, formatCost } from "../../../lib/provevi/cost/call_cost.ts";

const table = PriceTable.builtin();

Deno.test("the shipped price table is checked, and pinned by the SHA-256 of its canonical JSON", async () => {
  assert.ok(table.models.length >= 15);
  const text = await Deno.readTextFile(new URL("../../../lib/provevi/cost/prices.json", import.meta.url));
  // the same table written another way pins the same
  assert.equal(PriceTable.parse(JSON.stringify(JSON.parse(text)), "t").sha256, table.sha256);
  assert.match(table.sha256, /^[0-9a-f]{64}$/);
});

Deno.test("priceOf() finds a dated model by its undated entry, a model alone when one provider lists it, and a test: model at 0", () => {
  assert.equal(
    table.priceOf({ provider: "anthropic", model: "claude-sonnet-4-5-20250929" })?.model,
    "claude-sonnet-4-5",
  );
  assert.equal(table.priceOf({ provider: "openai.responses", model: "gpt-4o-2024-08-06" })?.model, "gpt-4o");
  assert.equal(
    table.priceOf({ provider: "openai-compatible", model: "deepseek-chat" })?.provider,
    "deepseek",
  );
  assert.equal(
    table.priceOf({ provider: "anthropic", model: "claude-x", answeredBy: "claude-haiku-4-5-20251001" })
      ?.model,
    "claude-haiku-4-5",
  );
  assert.equal(table.priceOf({ provider: "test", model: "fixtures/models/answer.yaml" })?.input, 0);
  assert.equal(table.priceOf({ provider: "openai", model: "gpt-unknown" }), null);
});

Deno.test("a price table that is not one is refused, naming what is wrong", () => {
  const good = JSON.parse(JSON.stringify(table.json));
  const cases: [unknown, RegExp][] = [
    [[], /is not a JSON object/],
    [{ ...good, version: 2 }, /version is 2; this toolkit reads version 1/],
    [{ ...good, unit: "per token" }, /prices are per million tokens/],
    [
      { ...good, models: [{ ...good.models[0], reasoning: undefined }] },
      /models\[0\]: reasoning is not a price.*all five prices/,
    ],
    [{ ...good, models: [{ ...good.models[0], input: -1 }] }, /models\[0\]: input is not a price/],
    [{ ...good, models: [{ ...good.models[0], input: 0.1234567 }] }, /more than 6 decimals/],
    [
      { ...good, models: [good.models[0], good.models[0]] },
      /models\[1\]: anthropic:claude-opus-4-5 is listed twice/,
    ],
    [{ ...good, models: [{ ...good.models[0], discount: 1 }] }, /discount is not a key/],
  ];
  for (const [json, message] of cases) {
    assert.throws(() => PriceTable.parse(JSON.stringify(json), "prices.json"), message);
  }
  assert.throws(() => PriceTable.parse("{", "prices.json"), /prices\.json is not JSON/);
});

Deno.test("a cost is exact: cached and reasoning tokens are priced apart and never counted twice", () => {
  const price = table.priceOf({ provider: "openai", model: "gpt-5" })!;
  const { total, parts } = callCost({
    input: 1_000_000,
    cacheRead: 1_000_000,
    cacheWrite: 0,
    output: 10,
    reasoning: 10,
  }, price);
  assert.equal(parts.input, 0n);
  assert.equal(parts.output, 0n);
  assert.equal(formatCost(total), "0.1251");
  // a million calls of a thousandth of a cent add up to ten dollars, not 9.999999…
  let sum = 0n;
  for (let i = 0; i < 1000; i++) sum += parseCost("0.01")!;
  assert.equal(formatCost(sum), "10");
  assert.equal(parseCost("1.0000000000001"), null);
});
