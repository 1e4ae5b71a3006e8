/**
 * The hook listener of a `claude-code` or `codex` run under attack: it writes `hook_called` events into the run's
 * evidence and answers the program's blocking `PreToolUse` hooks, so only the run's program may reach it. A
 * stranger is another local user (who can list every process's arguments, so reads a `curl` hook's command line),
 * a web page in the user's browser (a cross-site POST, DNS rebinding), or anyone who holds the listener's address
 * from a log. Each attempt must be stopped (nothing reaches the evidence) and recorded (counted as a stranger's, which
 * `sandbox_completed` writes as `hook_strangers`); the program's own unreadable input is denied, not let through.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { trace } from "@opentelemetry/api";
import type { RunReceiver } from "../../lib/provevi/receiver/run_receiver.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { EvidenceRecorder } from "../../lib/provrun/run/recorder.ts";
import { listenForHooks, MAX_HOOK_INPUT } from "../../lib/provrun/backends/_program_hooks.ts";
import { ClaudeCodeBackend } from "../../lib/provrun/backends/claude_code.ts";
import { CodexBackend } from "../../lib/provrun/backends/codex.ts";
import { runGrants } from "../../lib/provrun/backends/tool_grants.ts";
import type { ProgramLaunch, ProgramSetup } from "../../lib/provrun/backends/program_backend.ts";
import { tempStore } from "../provevi/receiver/_daemon.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("hook listener attacks");

/** A run with its recorder, and a hook listener on it that denies every blocking hook it decides. */
async function listening(t: { store: import("../../lib/provevi/mod.ts").FileStore }) {
  const writer = await t.store.openRun("run-20261130T120000Z-0000600d");
  const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
  await recorder.record({ type: "run_created", component: "RunContext", data: {} });
  const hooks = listenForHooks({
    recorder,
    component: "ClaudeCodeBackend",
    program: "claude-code",
    grants: runGrants(writer.folder, { hosts: [], unsandboxed: [] }),
    span: trace.wrapSpanContext({ traceId: "a".repeat(32), spanId: "b".repeat(16), traceFlags: 1 }),
    reply: (event, decision) => ({ event, decision }),
  });
  const hookEvents = async () =>
    readEventsText(await Deno.readTextFile(join(writer.folder, "evidence", "events.jsonl"))).events
      .filter((e) => e.type === "hook_called");
  return { hooks, hookEvents };
}

/** One request over a raw connection: any head a program likes, and a body that may never end. */
async function raw(
  port: number,
  { path = "/hook", headers = {}, body = "{}", endless = false, flood = 0 }: {
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    endless?: boolean;
    /** Bytes sent in chunks after the body, while the answer is awaited. */
    flood?: number;
  },
): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const all: Record<string, string> = {
      host: `127.0.0.1:${port}`,
      "content-type": "application/json",
      ...headers,
    };
    if (endless) all["transfer-encoding"] = "chunked";
    else all["content-length"] ??= String(new TextEncoder().encode(body).byteLength);
    const head = `POST ${path} HTTP/1.1\r\n` + Object.entries(all).map(([k, v]) =>
      `${k}: ${v}\r\n`
    ).join("") +
      "\r\n";
    await conn.write(
      new TextEncoder().encode(head + (endless ? `${body.length.toString(16)}\r\n${body}\r\n` : body)),
    );
    const chunk = new TextEncoder().encode(`100000\r\n${" ".repeat(0x100000)}\r\n`);
    const flooding = (async () => {
      for (let sent = 0; sent < flood; sent += 0x100000) {
        for (let at = 0; at < chunk.byteLength;) at += await conn.write(chunk.subarray(at));
      }
    })().catch(() => {}); // the listener may close the connection as soon as it answers
    let text = "";
    const buf = new Uint8Array(4096);
    const deadline = setTimeout(() => conn.close(), 30_000);
    try {
      while (!/^HTTP\/1\.1 \d{3}/.test(text)) {
        const n = await conn.read(buf);
        if (n === null) break;
        text += new TextDecoder().decode(buf.subarray(0, n));
      }
    } finally {
      clearTimeout(deadline);
    }
    await Promise.race([flooding, new Promise((resolve) => setTimeout(resolve, 100))]);
    return Number(text.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? 0);
  } finally {
    try {
      conn.close();
    } catch { /* closed at the deadline */ }
  }
}

const PRE_TOOL_USE = JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Read", tool_input: {} });

Deno.test("a stranger cannot write a hook into a run's evidence: no key, a key in the address, another Host or a web page is refused before its body, and counted", async () => {
  await using t = await tempStore();
  const { hooks, hookEvents } = await listening(t);
  try {
    const port = Number(new URL(hooks.url).port);
    const key = hooks.headers.authorization!.slice("Bearer ".length);
    const attacks: [string, Parameters<typeof raw>[1], number][] = [
      ["no key", { body: PRE_TOOL_USE }, 401],
      ["a wrong key", { headers: { authorization: `Bearer ${"0".repeat(64)}` }, body: PRE_TOOL_USE }, 401],
      ["the key in the address", { path: `/hook/${key}`, body: PRE_TOOL_USE }, 401],
      ["the key in the query", { path: `/hook?key=${key}`, body: PRE_TOOL_USE }, 401],
      ["DNS rebinding with the key (Host: evil.example)", {
        headers: { ...hooks.headers, host: `evil.example:${port}` },
        body: PRE_TOOL_USE,
      }, 421],
      ["a web page's cross-site POST with the key", {
        headers: { ...hooks.headers, origin: "https://evil.example", "content-type": "text/plain" },
        body: PRE_TOOL_USE,
      }, 403],
      ["a page on another port of 127.0.0.1", {
        headers: { ...hooks.headers, origin: "http://127.0.0.1:1" },
        body: PRE_TOOL_USE,
      }, 403],
      ["a stranger's body that never ends", { body: "{", endless: true }, 401],
    ];
    let strangers = 0;
    for (const [name, request, want] of attacks) {
      const status = await raw(port, request);
      strangers++;
      tally.add(name, { stopped: status === want, recorded: hooks.counts.strangers === strangers });
      assert.equal(status, want, name);
    }
    assert.equal(hooks.counts.strangers, attacks.length);
    assert.deepEqual(await hookEvents(), [], "no stranger's hook reached the evidence");
    // the run's program itself, with its key in a header, is heard
    const own = await fetch(hooks.url, { method: "POST", headers: { ...hooks.headers }, body: PRE_TOOL_USE });
    assert.equal(own.status, 200);
    await own.body?.cancel();
    assert.equal((await hookEvents()).length, 1);
  } finally {
    await hooks.shutdown();
  }
  console.log(tally.line());
});

Deno.test("the run's program's hook input that is too large or not JSON is denied and recorded, never let through as an error", async () => {
  await using t = await tempStore();
  const { hooks, hookEvents } = await listening(t);
  try {
    const port = Number(new URL(hooks.url).port);
    const cases: [string, Parameters<typeof raw>[1]][] = [
      ["an input sent in chunks past the bound", {
        headers: { ...hooks.headers },
        body: "[",
        endless: true,
        flood: MAX_HOOK_INPUT + 0x200000,
      }],
      ["an input that declares a length past the bound", {
        headers: { ...hooks.headers, "content-length": String(MAX_HOOK_INPUT + 1) },
        body: "",
      }],
      ["an input that is not JSON", { headers: { ...hooks.headers }, body: "not json" }],
      ["an input that is a JSON array", { headers: { ...hooks.headers }, body: "[]" }],
    ];
    for (const [name, request] of cases) {
      const before = (await hookEvents()).length;
      const status = await raw(port, request);
      const events = await hookEvents();
      const last = events.at(-1)?.data as Record<string, unknown> | undefined;
      tally.add(`the program's own: ${name}`, {
        stopped: status === 200 && last?.decision === "deny",
        recorded: events.length === before + 1,
      });
      assert.equal(status, 200, name);
      assert.equal(last?.decision, "deny", name);
    }
    assert.ok(MAX_HOOK_INPUT >= 1024 * 1024);
  } finally {
    await hooks.shutdown();
  }
  console.log(tally.line());
});

/** What `prepare` of a program backend writes, with a hook listener's address and key. */
async function prepared(
  backend: "claude-code" | "codex",
  key: string,
): Promise<{ launch: ProgramLaunch; home: string }> {
  const home = await Deno.makeTempDir({ prefix: `provrun-${backend}-hooks-` });
  const spans = {
    url: "http://127.0.0.1:45678",
    tracesUrl: "http://127.0.0.1:45678/v1/traces",
    host: "127.0.0.1:45678",
    headers: { authorization: `Bearer ${"e".repeat(64)}` },
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
    hook: { url: "http://127.0.0.1:45680/hook", headers: { authorization: `Bearer ${key}` } },
    traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01`,
    prompt: "hi",
    env: (n: string) => (n === "FAKE_KEY" ? "sk-fake" : n === "PATH" ? "/usr/bin:/bin" : undefined),
  } as unknown as ProgramSetup;
  const b = backend === "codex" ? new CodexBackend() : new ClaudeCodeBackend();
  const prepare = (b as unknown as { prepare(s: ProgramSetup, p: string): Promise<ProgramLaunch> }).prepare;
  return { launch: await prepare.call(b, setup, backend), home };
}

for (const backend of ["claude-code", "codex"] as const) {
  Deno.test(`a ${backend} run's hook key is in no command line or address, only in files the user alone reads`, async () => {
    const key = "c0ffee".repeat(10) + "beef";
    const { launch, home } = await prepared(backend, key);
    try {
      const config = await Deno.readTextFile(
        join(home, backend === "codex" ? "config.toml" : "settings.json"),
      );
      // every command a hook runs, as `ps` shows it to every local user
      const commands = backend === "codex"
        ? [...config.matchAll(/^command = (".*")$/gm)].map((m) => JSON.parse(m[1]!) as string)
        : [...config.matchAll(/"command": (".*")/g)].map((m) => JSON.parse(m[1]!) as string);
      const urls = config.match(/https?:\/\/[^\s"']+/g) ?? [];
      const leaks = [...commands, ...urls, ...launch.args].filter((s) => s.includes(key));
      const headerFile = join(home, "hook-headers");
      const mode = (await Deno.stat(headerFile)).mode! & 0o077;
      tally.add(`${backend}: the hook key off every command line and address`, {
        stopped: commands.length > 0 && leaks.length === 0,
        recorded: mode === 0 && (await Deno.readTextFile(headerFile)).includes(key),
      });
      assert.ok(commands.length > 0, "the hooks are commands");
      assert.deepEqual(leaks, []);
      assert.equal(mode, 0, "the header file is the user's only");
    } finally {
      await Deno.remove(home, { recursive: true });
    }
    console.log(tally.line());
  });
}
