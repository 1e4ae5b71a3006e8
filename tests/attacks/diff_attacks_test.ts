/**
 * `prove diff` reads the payloads of two runs to say where they differ (the rendered prompt line by line, a
 * request or an answer key by key): a payload is the run's to hold, and a hostile one may nest 100,000 deep
 * (a few hundred KiB). Each must give a difference, never a crash of the reader; an event nested so (its line is the
 * run's too) is refused in one line, as the verifier refuses it.
 * @module
 */
import assert from "node:assert/strict";
import { diffOf } from "./_diff_work.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("diff attacks");
const deep = (n: number, inner: string) => "[".repeat(n) + inner + "]".repeat(n);

Deno.test("prove diff compares payloads nested 100,000 deep without a crash", async () => {
  const cases: [string, Parameters<typeof diffOf>[0], Parameters<typeof diffOf>[1], RegExp][] = [
    ["a rendered prompt nested deep", {}, { prompt: deep(100_000, "1") }, /the rendered prompt differs/],
    [
      "two requests nested deep that differ at the bottom",
      { request: `{"prompt":${deep(100_000, "1")}}` },
      { request: `{"prompt":${deep(100_000, "2")}}` },
      /the request of model call 1 differs/,
    ],
    [
      "two answers nested deep that differ at the bottom",
      { response: `{"text":${deep(100_000, "1")}}` },
      { response: `{"text":${deep(100_000, "2")}}` },
      /the answer differs/,
    ],
    [
      "two runs' settings nested deep in their events, that differ at the bottom",
      { created: `{"spec":${deep(100_000, "1")}}` },
      { created: `{"spec":${deep(100_000, "2")}}` },
      /line 1 nests .* deep/,
    ],
    [
      "an answer nested deep beside a plain one",
      {},
      { response: `{"text":${deep(100_000, "1")}}` },
      /answer/,
    ],
  ];
  for (const [name, a, b, said] of cases) {
    const got = await diffOf(a, b);
    // a difference, or (an event nested past what a reader walks) the one-line refusal of the events
    const ok = said.test(
      got.error === undefined ? got.detail ?? "" : got.error.replace(/^EvidenceReadError: /, ""),
    );
    tally.add(name, { stopped: ok, recorded: ok });
    assert.ok(ok, `${name}: ${JSON.stringify(got).slice(0, 300)}`);
  }
  console.log(tally.line());
});
