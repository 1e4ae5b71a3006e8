import { equal } from "node:assert/strict";
import {
  MODEL_KEYS,
  plainAttribute,
  plainExperiment,
  plainName,
  plainSpanName,
  RUN_MODEL_KEYS,
} from "../../../lib/provevi/telemetry/plain_name.ts";

/** Runs one test per value, so that a failure names the value. */
function table(title: string, values: unknown[], expected: boolean, test: (v: unknown) => boolean) {
  for (const value of values) {
    Deno.test(`${title}: ${JSON.stringify(value)}`, () =>
      equal(test(value), expected, JSON.stringify(value)));
  }
}

// The seed's examples, rule by rule.
table("plainName() refuses a URL with a user and password", ["https://user:password@host"], false, plainName);
table(
  "plainName() refuses a user and password in either order",
  ["user:password@host", "user@host:password"],
  false,
  plainName,
);
table("plainName() refuses a setting with =", ["token=x", "api_key=abc"], false, plainName);
table("plainName() refuses a path from /", ["/etc/passwd", "/x"], false, plainName);
table("plainName() refuses a . or .. segment", ["./x", "../x", "x/..", ".", ".."], false, plainName);
table("plainName() refuses a path with more than one /", ["tmp/a/b", "a/b/c"], false, plainName);
table("plainName() keeps a model name with one /", ["openai/gpt-4o-mini"], true, plainName);
table(
  "plainName() refuses a path with a hidden part",
  ["home/someone/.ssh/id_rsa", "x/.env", "x/.ssh"],
  false,
  (v) => plainName(v) || plainName(v, { declared: [v as string] }),
);
table(
  "plainName() refuses a path from a drive",
  ["C:/Users/someone", "c:/x", "D:/data"],
  false,
  (v) => plainName(v) || plainName(v, { declared: [v as string] }),
);
table(
  "plainName() refuses a path from home, Users, root, etc, private, Volumes, tmp or var, in any case",
  [
    "etc/passwd",
    "ETC/passwd",
    "home/x",
    "Users/someone",
    "root/x",
    "private/x",
    "Volumes/x",
    "tmp/x",
    "var/x",
  ],
  false,
  (v) => plainName(v) || plainName(v, { declared: [v as string] }),
);
table(
  "plainName() refuses a path through a home",
  ["data/home/someone/x", "a/Users/b/c"],
  false,
  (v) => plainName(v, { declared: [v as string] }),
);
table(
  "plainName() refuses a path two folders deep from another folder of the root",
  ["run/secrets/x", "opt/app/x", "proc/self/environ", "usr/local/x"],
  false,
  (v) => plainName(v, { declared: [v as string] }),
);
table(
  "plainName() refuses a path that ends in a file of keys or settings",
  ["x/key.pem", "x/key.pem.bak", "x/config.yaml", "x/kubeconfig", "x/id_rsa.pub", "x/id_rsa", "x/prod.env"],
  false,
  plainName,
);
table(
  "plainName() refuses a part that is a scheme, a host or an email before a /",
  [
    "https:/host/x",
    "s3:/bucket/key",
    "x/host.com/a",
    "127.1/x",
    "db:5432/x",
    "x/user@host.com/a",
    "s3:bucket/x",
  ],
  false,
  (v) => plainName(v) || plainName(v, { declared: [v as string] }),
);
table(
  "plainName() keeps names that start with a model host of Ollama",
  [
    "hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF",
    "huggingface.co/x/y",
    "modelscope.cn/x/y",
    "registry.ollama.ai/library/llama3",
  ],
  true,
  (v) => plainName(v, { declared: [v as string] }),
);
table(
  "plainName() keeps a provider prefix that is not a scheme",
  ["groq:meta-llama/x", "name:bucket/x"],
  true,
  plainName,
);
table("plainName() keeps a host or an email with no path", ["host.com", "user@host.com"], true, plainName);
table("plainName() keeps an IP address written as one number", ["2130706433/x"], true, plainName);
table("plainName() keeps a path with one / to a file of another name", ["x/notes"], true, plainName);
table(
  "plainName() keeps one word",
  ["id_rsa", ".env", "gpt-4o", "claude-3-5-sonnet-20240620"],
  true,
  plainName,
);
table(
  "plainName() refuses a common API key or token",
  [
    "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
    "sk-ant-api03-abcdefghijklmnopqrstuv",
    "sk_live_abcdefghijklmnop",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "xoxb-1234567890-abcdefghij",
    "AKIAIOSFODNN7EXAMPLE",
    "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
    "prefix-sk-abcdefghijklmnopqrstuvwxyz012345",
    "sk_test_abcdefghijkl",
    "rk_live_abcdefghijkl",
    "pk_live_abcdefghijkl",
    "github_pat_11ABCDEFG0abcdefghijklmn",
    "ASIAIOSFODNN7EXAMPLE",
    "ANVAIOSFODNN7EXAMPLE",
    "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
    "glpat-abcdefghijklmnopqrst",
    "xoxp-1234567890-abcdefghij",
    "r8_abcdefghijklmnopqrstuvwxyz0123456789",
    "openai/sk-abcdefghijklmnopqrstuvwxyz012345",
  ],
  false,
  plainName,
);
table(
  "plainName() keeps names too short to be keys",
  ["hf_transfer", "sk-learn", "xoxb", "eyJ"],
  true,
  plainName,
);
table(
  "plainName() refuses ns:model@tag, which looks like user:password@host",
  ["ns:model@tag"],
  false,
  plainName,
);
table("plainName() keeps a number and a yes or no", [0, 12.5, -3, true, false], true, plainName);
table(
  "plainName() refuses what is not one word of at most 200 characters",
  ["", "two words", "tab\there", "new\nline", "x".repeat(201), null, undefined, {}, [], NaN, Infinity],
  false,
  plainName,
);
Deno.test("plainName() keeps a word of exactly 200 characters", () =>
  equal(plainName("x".repeat(200)), true));

// What an attacker tries next.
table(
  "plainName() refuses a separator in disguise",
  [
    "etc%2Fpasswd",
    "x%2F..%2Fy",
    "user%40host:pw",
    "%2e%2e/x",
    "x\\..\\..\\windows",
    "C:\\Users\\someone",
    "etc\uff0fpasswd",
    "x/host\u3002com/a",
    "HTTPS://host/x",
    "File:///etc/passwd",
    "~/x",
    "x//y",
    "x/",
    "[::1]/x",
    "localhost/x",
    "host.com:8080/x",
  ],
  false,
  (v) => plainName(v) || plainName(v, { declared: [v as string] }),
);
table(
  "plainName() refuses a zero-width or other invisible separator",
  ["gpt\u200b4o", "a\u2028b", "a\u00a0b", "a\u0000b", "a\u007fb"],
  false,
  plainName,
);
table(
  "plainName() keeps model names with dots that are not hosts",
  ["qwen2.5/x", "llama3.1/8b", "anthropic.claude-3-5-sonnet-20240620-v1:0", "gpt-4.5"],
  true,
  plainName,
);

Deno.test("plainName() lets a declared text have more than one /", () => {
  equal(plainName("openrouter/meta-llama/llama-3-70b"), false);
  equal(
    plainName("openrouter/meta-llama/llama-3-70b", { declared: ["openrouter/meta-llama/llama-3-70b"] }),
    true,
  );
  equal(plainName("scratch/x/notes", { declared: new Set(["scratch/x/notes"]) }), true);
});
Deno.test("plainName() still applies every other test to a declared text", () => {
  for (const v of ["home/someone/.ssh/id_rsa", "x/host.com/a", "opt/app/x", "a/b/key.pem", "https://h/x/y"]) {
    equal(plainName(v, { declared: [v] }), false, v);
  }
});
Deno.test("plainName() treats declared as a list, and one text as misuse", () => {
  let thrown = false;
  try {
    plainName("a/b/c", { declared: "a/b/c" as unknown as string[] });
  } catch (error) {
    thrown = error instanceof TypeError;
  }
  equal(thrown, true);
});

Deno.test("plainAttribute() declares the value under a model key", () => {
  equal(MODEL_KEYS.has("gen_ai.request.model"), true);
  equal(MODEL_KEYS.has("gen_ai.response.model"), true);
  equal(plainAttribute("gen_ai.request.model", "openrouter/meta-llama/llama-3-70b"), true);
  equal(plainAttribute("gen_ai.response.model", "scratch/x/notes"), true);
  equal(plainAttribute("gen_ai.request.model", "x/host.com/a"), false);
});
Deno.test("plainAttribute() does not declare a library's plain model key", () => {
  equal(MODEL_KEYS.has("model"), false);
  equal(plainAttribute("model", "openrouter/meta-llama/llama-3-70b"), false);
  equal(plainAttribute("path", "scratch/x/notes"), false);
});
Deno.test("plainAttribute() declares each name in a list under a model key", () => {
  equal(plainAttribute("gen_ai.request.model", ["a/b/c", "openai/gpt-4o"]), true);
  equal(plainAttribute("tags", ["a/b/c"]), false);
  equal(plainAttribute("gen_ai.response.finish_reasons", ["stop", "length"]), true);
  equal(plainAttribute("gen_ai.request.model", ["ok", "token=x"]), false);
});
Deno.test("plainAttribute() keeps a mapping only if each of its keys is a plain name", () => {
  equal(plainAttribute("usage", { input_tokens: 3, output_tokens: 4 }), true);
  equal(plainAttribute("usage", { "/etc/passwd": 3 }), false);
  equal(plainAttribute("usage", { a: { b: 1 } }), false);
  equal(plainAttribute("x", [[1]]), false);
});
Deno.test("RUN_MODEL_KEYS adds model and answered_by", () => {
  equal(RUN_MODEL_KEYS.has("model"), true);
  equal(RUN_MODEL_KEYS.has("answered_by"), true);
  equal(RUN_MODEL_KEYS.has("gen_ai.request.model"), true);
  equal(plainAttribute("model", "openrouter/meta-llama/llama-3-70b", { modelKeys: RUN_MODEL_KEYS }), true);
  equal(plainAttribute("answered_by", "a/b/c", { modelKeys: RUN_MODEL_KEYS }), true);
});
Deno.test("plainAttribute() ignores a __proto__ key's prototype", () => {
  equal(plainAttribute("x", JSON.parse('{"__proto__": {"a": "token=x"}}')), false);
});

Deno.test("plainSpanName() takes one or two plain words", () => {
  equal(plainSpanName("chat gpt-4o"), true);
  equal(plainSpanName("invoke_agent"), true);
  equal(plainSpanName("execute_tool read_file"), true);
  equal(plainSpanName("chat gpt-4o extra"), false);
  equal(plainSpanName("chat  gpt-4o"), false);
  equal(plainSpanName("read /etc/passwd"), false);
  equal(plainSpanName("chat token=x"), false);
  equal(plainSpanName(""), false);
  equal(plainSpanName("chat openrouter/meta-llama/llama-3-70b"), false);
  equal(
    plainSpanName("chat openrouter/meta-llama/llama-3-70b", {
      declared: ["openrouter/meta-llama/llama-3-70b"],
    }),
    true,
  );
});

Deno.test("plainExperiment() lets through an experiment URI of plain parts, with a commit pin or none", () => {
  equal(plainExperiment("experiment://acme/risk/dev/credit/q"), true);
  equal(plainExperiment("experiment://acme/risk/dev/credit/q?at=commit:3f2a9c1d"), true);
  equal(plainExperiment("experiment://acme/risk/dev/credit/q?at=branch:main"), false);
  equal(plainExperiment("experiment://acme/risk/dev/credit/q?at=version:7"), false);
  equal(plainExperiment("experiment://acme/risk/dev/credit/q?at=commit:main"), false);
  equal(plainExperiment("experiment://acme/risk/dev/token=x"), false);
  equal(plainExperiment("experiment://acme/risk/dev/../q"), false);
  equal(plainExperiment("experiment://acme/risk//q"), false);
  equal(plainExperiment("experiment://acme/risk"), false);
  equal(plainExperiment("Experiment://acme/risk/dev/q"), false);
  equal(plainExperiment("data+table://acme/risk/dev/q"), false);
  equal(plainExperiment("experiment://acme/risk/dev/q#frag"), false);
  equal(plainExperiment("experiment://acme/risk/dev/a b"), false);
  equal(plainExperiment(42), false);
});

Deno.test("plainName() refuses a secret written as name:value, and keeps names with a colon that are not", () => {
  for (const secret of ["token:abc123", "password:hunter2", "API_KEY:xyz", "auth:Bearer", "x-pwd:1"]) {
    equal(plainName(secret), false, secret);
  }
  for (const name of ["groq:meta-llama/x", "ollama:llama3", "keyboard:us", "tokens:12"]) {
    equal(plainName(name), true, name);
  }
});

Deno.test("plainName() refuses an HTTP header that carries a secret, written as name:value", () => {
  for (
    const secret of [
      "Authorization:Bearer-x",
      "authorization:abc123",
      "Proxy-Authorization:Basic-xyz",
      "Cookie:sid-abc",
    ]
  ) {
    equal(plainName(secret), false, secret);
  }
  const models = [
    "groq:llama-3",
    "ollama:mistral",
    "openai:gpt-4o",
    "anthropic:claude-3-5-sonnet",
    "bedrock:anthropic.claude",
    "vertex:gemini",
    "bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0",
    "openai:ft:gpt-4o:my-org:custom:id",
  ];
  for (const name of models) equal(plainName(name), true, name);
  equal(plainName("x_api_key:abc"), false);
});
