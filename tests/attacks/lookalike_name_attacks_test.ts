/**
 * Attacks on names that are identities (an MLflow experiment's name and tags, an assessment's name and value, a
 * model or any attribute below `bodies`) with characters that look like others: full-width and mathematical
 * letters, one Latin letter swapped for its Cyrillic or Greek twin, a whole word of Cyrillic look-alikes,
 * hyphens, dots and colons of other blocks (modifier letters among them), ligatures, superscripts, Roman numerals, a letter written as a base
 * and a combining mark. Each passed the plain-name test (NFKC changes all but the script mixes and signs), so
 * `ｇｐｔ-4o` went to MLflow as a name that shows as `gpt-4o` and is another. Now each is not a plain name, by
 * the fast path and the full rules alike, and so shows as its label where a name is cut; names of one real
 * script (Japanese, Greek, Russian, Korean, Arabic, Hindi) still pass.
 * @module
 */
import assert from "node:assert/strict";
import { plainAttribute, plainName } from "../../lib/provevi/telemetry/plain_name.ts";
import { plainTextFull } from "../../lib/provevi/telemetry/_plain_text.ts";
import { experimentName } from "../../lib/provevi/mlflow/experiment_name.ts";
import { experimentAssessmentTags } from "../../lib/provevi/mlflow/experiment_tags.ts";
import type { Assessment } from "../../lib/provevi/store/assess.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("look-alike name attacks");

/** Each look-alike, with the name it shows as. */
const LOOKALIKES: [string, string, string][] = [
  ["full-width letters", "\uff47\uff50\uff54-4o", "gpt-4o"],
  ["a full-width hyphen", "gpt\uff0d4o", "gpt-4o"],
  ["mathematical bold letters", "\u{1d420}\u{1d429}\u{1d42d}-4o", "gpt-4o"],
  ["a Cyrillic o", "gpt-4\u043e", "gpt-4o"],
  ["a Cyrillic a", "cl\u0430ude", "claude"],
  ["a Greek omicron", "gpt-4\u03bf", "gpt-4o"],
  ["a Greek capital alpha", "\u0391cme", "Acme"],
  ["a whole word of Cyrillic look-alikes", "\u0440\u0430\u0443\u0440\u0430\u0441", "paypac"],
  ["a whole word of Greek look-alikes", "\u039a\u039f\u03a1\u03a4", "KOPT"],
  ["a hyphen of U+2010", "gpt\u20104o", "gpt-4o"],
  ["an en dash", "gpt\u20134o", "gpt-4o"],
  ["a minus sign", "gpt\u22124o", "gpt-4o"],
  ["a ratio sign for a colon", "llama3\u22368b", "llama3:8b"],
  ["a one-dot leader", "v1\u20242", "v1.2"],
  ["a middle dot", "v1\u00b72", "v1.2"],
  ["a ligature", "\ufb01ne-tune", "fine-tune"],
  ["a superscript two", "llama\u00b2", "llama2"],
  ["a Roman numeral one", "gpt-\u2170", "gpt-i"],
  ["a circled letter", "\u24d0cme", "acme"],
  ["a base and a combining mark NFKC joins", "cafe\u0301-bot", "café-bot"],
  ["a Kelvin sign", "\u212aeys", "Keys"],
  ["an Armenian letter among Latin ones", "g\u0585t", "got"],
  ["a Cherokee letter among Latin ones", "\u13aacme", "Acme"],
  // modifier letters and symbols of no script (Lm, Sk) that copy ASCII signs: not punctuation by category
  ["a modifier letter minus sign", "gpt\u02d74o", "gpt-4o"],
  ["a modifier letter colon", "llama3\ua7898b", "llama3:8b"],
  ["a triangular colon", "llama3\u02d08b", "llama3:8b"],
  ["a modifier letter apostrophe", "o\u02bcbrien", "o'brien"],
  ["a modifier letter prime", "gpt-4o\u02b9", "gpt-4o'"],
];

/** Names of one script, or of Latin with Han and kana, that must stay names. */
const REAL = [
  "モデル-v2",
  "模型-7b",
  "日本語・テスト",
  "サーバー-v2",
  "λόγος",
  "αβγ-μοντέλο",
  "модель",
  "한국어-모델",
  "العربية",
  "मॉडल",
  "café-bot",
  "naïve_agent",
  "🤖",
  "llama3:8b",
];

const assessment = (name: string, value: unknown): Assessment => ({
  id: 1,
  run_id: null,
  seq: null,
  span_id: null,
  experiment: "experiment://acme/risk/dev/q",
  name,
  value,
  rationale: null,
  source: null,
  created_at: "2026-01-01T00:00:00.000Z",
} as unknown as Assessment);

for (const [kind, text, shows] of LOOKALIKES) {
  Deno.test(`a name with ${kind} is not a plain name, nor an experiment's part or tag below bodies`, () => {
    assert.equal(plainName(shows), true, `${shows} itself`);
    const experiment = experimentName({ org: "acme", domain: "demo", env: "dev", agent: text }, "names");
    const tags = experimentAssessmentTags([assessment(text, text)], "names");
    const stopped = !plainName(text) && !plainAttribute("gen_ai.request.model", text) &&
      experiment === "acme/demo/dev/agent" && Object.keys(tags).length === 0;
    // recorded: the full rules, which the tests compare the fast path with, refuse it too
    tally.add(`${kind} (${text} for ${shows})`, { stopped, recorded: plainTextFull(text, false) === false });
    assert.ok(stopped, `${text} passed as ${shows}: ${JSON.stringify({ experiment, tags })}`);
  });
}

Deno.test("names of one script, or of Latin with Han and kana, still pass", () => {
  for (const name of REAL) assert.equal(plainName(name), true, name);
  assert.equal(
    experimentName({ org: "acme", domain: "demo", env: "dev", agent: "モデル-v2" }, "names"),
    "acme/demo/dev/モデル-v2",
  );
});

Deno.test("look-alike name attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
