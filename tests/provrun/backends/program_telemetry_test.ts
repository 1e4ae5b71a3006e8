import assert from "node:assert/strict";
import { join } from "node:path";
import type { RunReceiver } from "../../../lib/provevi/receiver/run_receiver.ts";
import { ClaudeCodeBackend } from "../../../lib/provrun/backends/claude_code.ts";
import { CodexBackend } from "../../../lib/provrun/backends/codex.ts";
import type { ProgramLaunch, ProgramSetup } from "../../../lib/provrun/backends/program_backend.ts";

// What provr itself has in its environment: telemetry settings of the user's, which must not reach a program.
const USER_ENV: Record<string, string> = {
  PATH: "/usr/bin:/bin",
  OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example.com",
  OTEL_EXPORTER_OTLP_HEADERS: "api-key=secret",
  OTEL_TRACES_EXPORTER: "console",
  CLAUDE_CODE_ENABLE_TELEMETRY: "1",
  ANTHROPIC_BASE_URL: "https://proxy.example.com",
  FAKE_KEY: "sk-fake",
};

const RECEIVER = "http://127.0.0.1:45678";
const KEY = "f".repeat(64);

async function launchOf(backend: "claude-code" | "codex"): Promise<{ launch: ProgramLaunch; home: string }> {
  const home = await Deno.makeTempDir({ prefix: `provrun-${backend}-telemetry-` });
  const spans = {
    url: RECEIVER,
    tracesUrl: `${RECEIVER}/v1/traces`,
    host: "127.0.0.1:45678",
    headers: { authorization: `Bearer ${KEY}` },
  } as unknown as RunReceiver;
  const agent = {
    name: "a",
    backend,
    model: backend === "codex" ? "openai:gpt-fake" : "anthropic:claude-sonnet-4-5",
    provider: { base_url: "http://127.0.0.1:45679", api_key_env: "FAKE_KEY" },
  };
  const setup = {
    job: { agent, inputs: [], outputs: [], prompt: "hi" },
    home,
    spans,
    hook: { url: "http://127.0.0.1:45680/hook", headers: { authorization: "Bearer h" } },
    traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01`,
    prompt: "hi",
    env: (n: string) => USER_ENV[n],
  } as unknown as ProgramSetup;
  // prepare() is the backend's own: reach it as the base class does
  const b = backend === "codex" ? new CodexBackend() : new ClaudeCodeBackend();
  const prepare = (b as unknown as { prepare(s: ProgramSetup, p: string): Promise<ProgramLaunch> }).prepare;
  return { launch: await prepare.call(b, setup, backend), home };
}

/** Every value of the program's environment that names a URL names a 127.0.0.1 address provr chose. */
function urlsOf(env: Record<string, string>): string[] {
  return Object.values(env).flatMap((v) => v.match(/[a-z]+:\/\/[^\s,"]+/g) ?? []);
}

Deno.test("a claude-code run switches the program's own telemetry off, but for its traces to the run's receiver, and passes none of the user's", async () => {
  const { launch, home } = await launchOf("claude-code");
  try {
    const env = launch.env;
    assert.equal(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, `${RECEIVER}/v1/traces`);
    assert.equal(env.OTEL_EXPORTER_OTLP_ENDPOINT, RECEIVER);
    assert.equal(env.OTEL_TRACES_EXPORTER, "otlp");
    assert.equal(env.OTEL_METRICS_EXPORTER, "none");
    assert.equal(env.OTEL_LOGS_EXPORTER, "none");
    for (const off of ["DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING", "DISABLE_AUTOUPDATER"]) {
      assert.equal(env[off], "1", off);
    }
    assert.equal(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, "1");
    // the run's key in a header, never the user's headers, never in a URL
    assert.equal(env.OTEL_EXPORTER_OTLP_HEADERS, `authorization=Bearer ${KEY}`);
    assert.ok(!urlsOf(env).some((u) => u.includes(KEY)));
    for (const url of urlsOf(env)) assert.match(url, /^http:\/\/127\.0\.0\.1:456(78|79|80)\b/, url);
    // settings: hooks to provr only, read from the run's own config home
    assert.equal(env.CLAUDE_CONFIG_DIR, home);
    const settings = await Deno.readTextFile(join(home, "settings.json"));
    assert.equal(
      (await Deno.stat(join(home, "settings.json"))).mode! & 0o077,
      0,
      "settings.json is the user's only",
    );
    for (const url of settings.match(/https?:\/\/[^\s"]+/g) ?? []) {
      assert.match(url, /^http:\/\/127\.0\.0\.1:45680\//);
    }
    assert.deepEqual(launch.problems, []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a codex run's config sends its traces to the run's receiver only, with its analytics, feedback and other exporters off", async () => {
  const { launch, home } = await launchOf("codex");
  try {
    const env = launch.env;
    assert.deepEqual(Object.keys(env).filter((k) => k.startsWith("OTEL_")), []);
    for (const url of urlsOf(env)) assert.match(url, /^http:\/\/127\.0\.0\.1:456(78|79|80)\b/, url);
    const config = await Deno.readTextFile(join(home, "config.toml"));
    assert.match(config, /\[otel\][^[]*exporter = "none"/);
    assert.match(config, /\[otel\][^[]*metrics_exporter = "none"/);
    assert.match(
      config,
      new RegExp(
        `trace_exporter = \\{ otlp-http = \\{ endpoint = "${RECEIVER}/v1/traces", protocol = "binary", ` +
          `headers = \\{ "authorization" = "Bearer ${KEY}" \\} \\} \\}`,
      ),
    );
    // it holds the run's key: the user's only
    assert.equal((await Deno.stat(join(home, "config.toml"))).mode! & 0o077, 0);
    assert.match(config, /\[analytics\]\nenabled = false/);
    assert.match(config, /\[feedback\]\nenabled = false/);
    assert.match(config, /check_for_update_on_startup = false/);
    for (const url of config.match(/https?:\/\/[^\s"]+/g) ?? []) {
      assert.match(url, /^http:\/\/127\.0\.0\.1:456(78|79|80)\b/, url);
    }
    assert.deepEqual(launch.problems, []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
