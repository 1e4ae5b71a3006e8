/**
 * The policy's fast path (one pass over a name's characters, remembered verdicts, the cut's inlined levels)
 * agrees with its slow path (the regular expressions and every rule, `_plain_text.ts`, and the level of each
 * attribute by `attributeLevel`) on generated names, values and spans built from the pieces that the rules look
 * for: separators, schemes, roots, key files, API keys, invisible and lookalike characters.
 */
import { deepEqual, equal } from "node:assert/strict";
import {
  attributeLevel,
  attributesFor,
  isOneWord,
  levelRank,
  LEVELS,
  NAME_KEYS,
  USAGE_KEYS,
} from "../../../lib/provevi/telemetry/attributes.ts";
import {
  MODEL_KEYS,
  plainAttribute,
  plainName,
  RUN_MODEL_KEYS,
} from "../../../lib/provevi/telemetry/plain_name.ts";
import { oneWordFull, plainTextFull } from "../../../lib/provevi/telemetry/_plain_text.ts";

/** A small deterministic generator (mulberry32), so a failure is the same on every run. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  "gpt-4o",
  "openai",
  "claude-3-5-sonnet",
  "llama-3-70b",
  "meta-llama",
  "openrouter",
  "chat",
  "read_file",
  "a",
  "x",
  "Q1",
  "2024",
  "07",
  "v1",
  "_",
  "-",
  ".",
  "..",
  "/",
  "//",
  "\\",
  ":",
  "@",
  "=",
  "%",
  "%2F",
  "%2e",
  "~",
  "+",
  "[",
  "]",
  "?",
  "#",
  "'",
  '"',
  "{",
  "}",
  ",",
  " ",
  "\t",
  "\n",
  "\r",
  "\x00",
  "\x1f",
  "\x7f",
  "\x85",
  "\xa0",
  "\u1680",
  "\u2000",
  "\u200b",
  "\u200d",
  "\u2028",
  "\u2029",
  "\u202f",
  "\u205f",
  "\u2060",
  "\u3000",
  "\ufeff",
  "\u3002",
  "\uff0e",
  "\uff61",
  "\u2024",
  "\ufe52",
  "\uff0f",
  "\u2044",
  "\u2215",
  "\u29f8",
  "\u2571",
  "é",
  "名前",
  "\ud83d\ude00",
  "\ud800",
  "https://",
  "http:",
  "s3:",
  "s3",
  "file://",
  "groq:",
  "ollama:",
  "ssh",
  "git@",
  "user:password@",
  "token:",
  "api_key:",
  "Authorization:",
  "Bearer",
  "password",
  "etc",
  "home",
  "Users",
  "tmp",
  "root",
  "opt",
  "proc",
  "run",
  "usr",
  "C:",
  "d:",
  "hf.co",
  "huggingface.co",
  "localhost",
  "127.0.0.1",
  "127.1",
  "host.com",
  "api.openai.com",
  "db:5432",
  "[::1]",
  "me@host.com",
  ".ssh",
  ".env",
  "id_rsa",
  "id_ed25519",
  ".pem",
  "key.pem",
  "config",
  "config.yaml",
  ".bak",
  "~",
  "credentials",
  "passwd",
  "shadow",
  "environ",
  "sk-",
  "sk-proj-",
  "sk-ant-",
  "rk_live_",
  "sk_test_",
  "pk_live_",
  "ghp_",
  "gho_",
  "github_pat_",
  "xoxb-",
  "AKIA",
  "ASIA",
  "AIza",
  "hf_",
  "eyJ",
  "eyJhbGciOiJIUzI1NiJ9.",
  "glpat-",
  "npm_",
  "xai-",
  "gsk_",
  "r8_",
  "-----BEGIN",
  "ABCDEFGHIJKLMNOP",
  "abcdefghijklmnopqrstuvwxyz",
  "0123456789",
  "AbCdEf0123456789xyz",
];

/** A text of pieces from {@linkcode PIECES}, sometimes long enough to cross 200 characters. */
function text(random: () => number): string {
  const count = 1 + Math.floor(random() * (random() < 0.05 ? 40 : 6));
  let out = "";
  for (let i = 0; i < count; i++) out += PIECES[Math.floor(random() * PIECES.length)]!;
  if (random() < 0.03) out = "k".repeat(190 + Math.floor(random() * 20)).slice(0, 195) + out;
  return out;
}

const KEYS = [...NAME_KEYS, ...USAGE_KEYS, ...RUN_MODEL_KEYS, "gen_ai.input.messages", "other", "__proto__"];

/** A value of an attribute: a text, a number of any kind, a yes or no, a list, a mapping, or something else. */
function value(random: () => number, depth = 0): unknown {
  const r = random();
  if (r < 0.45) return text(random);
  if (r < 0.55) return [0, -1, 1.5, NaN, Infinity, -Infinity, 1e300][Math.floor(random() * 7)];
  if (r < 0.6) return random() < 0.5;
  if (r < 0.63) return 12n;
  if (r < 0.65) return random() < 0.5 ? null : undefined;
  if (depth > 1) return text(random);
  if (r < 0.85) return Array.from({ length: Math.floor(random() * 4) }, () => value(random, depth + 1));
  const mapping: Record<string, unknown> = {};
  for (let i = 0; i < 3; i++) mapping[random() < 0.3 ? "model" : text(random)] = value(random, depth + 1);
  return mapping;
}

/** The slow path of `plainAttribute`, written from its rules. */
function slowPlainValue(
  v: unknown,
  declared: boolean,
  modelKeys: ReadonlySet<string>,
  depth: number,
): boolean {
  if (typeof v === "string") return plainTextFull(v, declared);
  if (typeof v === "number") return Number.isFinite(v);
  if (typeof v === "boolean" || typeof v === "bigint") return true;
  if (depth > 0) return false;
  if (Array.isArray(v)) return v.every((item) => slowPlainValue(item, declared, modelKeys, depth + 1));
  if (typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.entries(v).every(([k, item]) =>
      plainTextFull(k, false) && slowPlainValue(item, modelKeys.has(k), modelKeys, depth + 1)
    );
  }
  return false;
}

/** The slow path of `attributesFor`: every own attribute whose `attributeLevel` is at most the level. */
function slowAttributesFor(attributes: Record<string, unknown>, rank: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(attributes)) {
    if (levelRank(attributeLevel(k, v)) <= rank) {
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}

Deno.test("isOneWord and plainName agree with the regular expressions and rules on 60,000 generated texts", () => {
  const random = generator(33);
  for (let i = 0; i < 60_000; i++) {
    const t = text(random);
    equal(isOneWord(t), oneWordFull(t), JSON.stringify(t));
    // twice each: the first answer may be computed, the second remembered
    for (let again = 0; again < 2; again++) {
      equal(plainName(t), plainTextFull(t, false), JSON.stringify(t));
      equal(plainName(t, { declared: [t] }), plainTextFull(t, true), JSON.stringify(t));
    }
  }
});

Deno.test("a verdict remembered for a declared text is never the answer for the same text undeclared", () => {
  const model = "openrouter/meta-llama/llama-3-70b";
  for (let i = 0; i < 3; i++) {
    equal(plainName(model, { declared: [model] }), true);
    equal(plainName(model), false);
    equal(plainAttribute("gen_ai.request.model", model), true);
    equal(plainAttribute("path", model), false);
  }
});

Deno.test("plainAttribute agrees with its rules on 30,000 generated keys and values, with either set of model keys", () => {
  const random = generator(7);
  for (let i = 0; i < 30_000; i++) {
    const key = KEYS[Math.floor(random() * KEYS.length)]!;
    const v = value(random);
    const shown = `${key} = ${JSON.stringify(v, (_, x) => typeof x === "bigint" ? `${x}n` : x)}`;
    equal(plainAttribute(key, v), slowPlainValue(v, MODEL_KEYS.has(key), MODEL_KEYS, 0), shown);
    equal(
      plainAttribute(key, v, { modelKeys: RUN_MODEL_KEYS }),
      slowPlainValue(v, RUN_MODEL_KEYS.has(key), RUN_MODEL_KEYS, 0),
      shown,
    );
  }
});

Deno.test("attributesFor keeps exactly the attributes whose attributeLevel is at most the level, on 10,000 generated spans", () => {
  const random = generator(1033);
  for (let i = 0; i < 10_000; i++) {
    const attributes: Record<string, unknown> = {};
    const count = Math.floor(random() * 12);
    for (let k = 0; k < count; k++) {
      const key = KEYS[Math.floor(random() * KEYS.length)]!;
      Object.defineProperty(attributes, key, {
        value: value(random),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    for (const level of LEVELS) {
      const fast = attributesFor(attributes, level);
      deepEqual(fast, slowAttributesFor(attributes, levelRank(level)), `${level} ${Object.keys(attributes)}`);
      equal(Object.getPrototypeOf(fast), Object.prototype);
    }
  }
});
