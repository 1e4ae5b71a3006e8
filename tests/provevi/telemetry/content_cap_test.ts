import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { capJson, CONTENT_BYTES, CUT_MARK } from "../../../lib/provevi/telemetry/content_cap.ts";

const bytes = (text: string) => new TextEncoder().encode(text).length;

Deno.test("capJson() leaves a value within the cap as its JSON text", () => {
  const value = [{ role: "user", parts: [{ type: "text", content: "Q3?" }] }];
  deepEqual(capJson(value), { text: JSON.stringify(value), cut: false });
});

Deno.test("capJson() cuts the long texts of a value past the cap, marked, and keeps its shape and short names", () => {
  const value = [
    { role: "user", parts: [{ type: "text", content: "a".repeat(50_000) }] },
    { role: "assistant", parts: [{ type: "text", content: "é".repeat(30_000) }] },
  ];
  const { text, cut } = capJson(value);
  equal(cut, true);
  ok(bytes(text) <= CONTENT_BYTES, `${bytes(text)} bytes`);
  const back = JSON.parse(text);
  equal(back.length, 2);
  equal(back[0].role, "user");
  equal(back[1].parts[0].type, "text");
  ok(back[0].parts[0].content.startsWith("aaaa"));
  ok(back[0].parts[0].content.includes(CUT_MARK), "the cut is marked");
  ok(back[1].parts[0].content.includes(CUT_MARK));
});

Deno.test("capJson() drops the earliest items of a list too long even with short texts, and says how many", () => {
  const many = Array.from(
    { length: 5_000 },
    (_, i) => ({ role: "user", parts: [{ type: "text", content: `m${i}` }] }),
  );
  const { text, cut } = capJson(many, {
    maxBytes: 4096,
    dropped: (n) => ({ role: "user", parts: [{ type: "text", content: `${CUT_MARK} ${n} left out]` }] }),
  });
  equal(cut, true);
  ok(bytes(text) <= 4096);
  const back = JSON.parse(text);
  ok(back[0].parts[0].content.startsWith(CUT_MARK));
  deepEqual(back.at(-1), many.at(-1), "the latest message stays");
  const left = Number(/(\d+) left out/.exec(back[0].parts[0].content)![1]);
  equal(left + back.length - 1, many.length);
});

Deno.test("capJson() keeps the first items when told to, and cuts a value with no list as one text", () => {
  const tools = Array.from({ length: 2_000 }, (_, i) => ({ type: "function", name: `t${i}` }));
  const first = JSON.parse(capJson(tools, { maxBytes: 2048, keep: "first", dropped: (n) => ({ n }) }).text);
  deepEqual(first[0], tools[0]);
  ok("n" in first.at(-1));
  const object: Record<string, number> = {};
  for (let i = 0; i < 5_000; i++) object[`k${i}`] = i;
  const one = capJson(object, { maxBytes: 1024 });
  ok(bytes(one.text) <= 1024);
  ok((JSON.parse(one.text) as string).includes(CUT_MARK));
});

Deno.test("capJson() never splits a character, and refuses a cap too small to hold a mark", () => {
  const { text } = capJson(["😀".repeat(10_000)], { maxBytes: 1000 });
  ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(JSON.parse(text)[0]), "no lone high surrogate");
  throws(() => capJson("x", { maxBytes: 10 }), RangeError);
});
