/**
 * Attacks on the plain-name test (what may leave the evidence below `bodies`) with characters a reader does not
 * see: an API key, a path or a setting with one invisible character inside. The test refused the zero-width
 * space, joiners, word joiner and byte order mark, but let through every other character Unicode calls a format
 * character or ignorable (soft hyphen, invisible separator and operators, bidi controls, variation selectors,
 * Hangul fillers, tags): `sk\u00ad-proj…` passed as a plain name, since the key's pattern no longer matched, yet
 * it shows, and is often copied back, as the key. Each such character now makes the text no word, by the fast
 * path and the full rules alike.
 * @module
 */
import assert from "node:assert/strict";
import { plainAttribute, plainName } from "../../lib/provevi/telemetry/plain_name.ts";
import { plainTextFull } from "../../lib/provevi/telemetry/_plain_text.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("invisible characters in names");

/** Characters a reader does not see, one of each kind Unicode names. */
const INVISIBLE: [string, string][] = [
  ["soft hyphen", "\u00ad"],
  ["combining grapheme joiner", "\u034f"],
  ["Arabic letter mark", "\u061c"],
  ["Hangul choseong filler", "\u115f"],
  ["Mongolian vowel separator", "\u180e"],
  ["left-to-right mark", "\u200e"],
  ["right-to-left override", "\u202e"],
  ["function application", "\u2061"],
  ["invisible times", "\u2062"],
  ["invisible separator", "\u2063"],
  ["left-to-right isolate", "\u2066"],
  ["Hangul filler", "\u3164"],
  ["variation selector 16", "\ufe0f"],
  ["halfwidth Hangul filler", "\uffa0"],
  ["tag latin capital A", "\u{e0041}"],
  ["zero width space", "\u200b"],
];

/** Texts that are refused as they are, with where an invisible character goes in them. */
const SECRETS: [string, (c: string) => string][] = [
  ["an OpenAI key", (c) => `sk${c}-proj${"A1b2".repeat(8)}`],
  ["a GitHub token", (c) => `ghp${c}_${"x9Y8".repeat(9)}`],
  ["an AWS key ID", (c) => `AKIA${c}${"Q".repeat(16)}`],
  ["a setting", (c) => `token${c}=abc123`],
  ["a path of the machine", (c) => `etc/pass${c}wd`],
];

for (const [secret, make] of SECRETS) {
  Deno.test(`${secret} with an invisible character inside is not a plain name, by either path`, () => {
    assert.equal(plainName(make("")), false, `${secret} itself`);
    for (const [name, c] of INVISIBLE) {
      const text = make(c);
      const refused = !plainName(text) && !plainAttribute("gen_ai.request.model", text);
      tally.add(`${secret}, ${name}`, { stopped: refused, recorded: plainTextFull(text, false) === false });
      assert.ok(refused, `${secret} with a ${name} passed as a plain name`);
    }
  });
}

Deno.test("names of other scripts still pass: letters, marks and emoji are not invisible", () => {
  for (const name of ["café-bot", "模型-7b", "llama3:8b", "🤖", "naïve_agent", "mistral-large"]) {
    assert.equal(plainName(name), true, name);
  }
});

Deno.test("invisible characters in names: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
