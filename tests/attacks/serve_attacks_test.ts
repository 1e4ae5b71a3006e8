/**
 * `prove serve` and a run's own span receiver under attack, by everyone who is not the run's writer or its
 * program: another local user (who can reach 127.0.0.1 but not read the daemon's file), a web page in the
 * user's browser (a simple cross-site POST, or DNS rebinding), a program that learned a run's ID or traces
 * address from a log or the record, the run's own program reaching past its door, and anyone who tries to
 * exhaust the daemon. Each attempt must be stopped (the status says so, and nothing reaches a run) and recorded
 * (counted in the daemon's refusals, which `prove serve` prints when it stops; or written as the run's
 * `telemetry_problem`; or counted as a run receiver's strangers, which provr writes as a problem).
 * @module
 */
import assert from "node:assert/strict";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { readSpansFile } from "../../lib/provevi/evidence/spans_file.ts";
import { receiver } from "../../lib/provevi/receiver/run_receiver.ts";
import { SpanDaemon } from "../../lib/provevi/receiver/span_daemon.ts";
import {
  jsonSpans,
  openInStore,
  openRequest,
  openWith,
  postSpans,
  sealRequest,
  sealWith,
  tempStore,
  writerProcess,
} from "../provevi/receiver/_daemon.ts";
import { gzipBomb } from "./_gzip_bomb.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("serve attacks");

/**
 * Sends one request over a raw connection, as any program can: the `Host` it likes, and a body sent in chunks of
 * which only the first comes, the rest never. The answer comes before the body ends, or never (a door that
 * reads the body before refusing); it is read until its `{"…"}` body or its end.
 */
async function raw(
  port: number,
  { method = "POST", path, headers = {}, endless = true, first = "hello" }: {
    method?: string;
    path: string;
    headers?: Record<string, string>;
    endless?: boolean;
    first?: string;
  },
): Promise<{ status: number; text: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const all = {
      host: `127.0.0.1:${port}`,
      ...headers,
      ...(endless ? { "transfer-encoding": "chunked" } : {}),
    };
    const head = `${method} ${path} HTTP/1.1\r\n` +
      Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join("") + "\r\n" +
      (endless ? `${first.length.toString(16)}\r\n${first}\r\n` : "");
    await conn.write(new TextEncoder().encode(head));
    let text = "";
    const buf = new Uint8Array(4096);
    const deadline = setTimeout(() => conn.close(), 30_000);
    try {
      // the head, then as many bytes of body as it declares
      const complete = () => {
        const end = text.indexOf("\r\n\r\n");
        const length = Number(text.match(/content-length: (\d+)/i)?.[1] ?? 0);
        return end >= 0 && new TextEncoder().encode(text.slice(end + 4)).byteLength >= length;
      };
      while (!complete()) {
        const n = await conn.read(buf);
        if (n === null) break;
        text += new TextDecoder().decode(buf.subarray(0, n));
      }
    } finally {
      clearTimeout(deadline);
    }
    return { status: Number(text.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? 0), text };
  } finally {
    try {
      conn.close();
    } catch { /* closed at the deadline */ }
  }
}

/** The message of an OTLP error answer, JSON or protobuf (`google.rpc.Status`: field 2 is the message). */
async function messageOf(r: Response): Promise<string> {
  if ((r.headers.get("content-type") ?? "").includes("json")) return (await r.json()).message as string;
  return new TextDecoder().decode(new Uint8Array(await r.arrayBuffer()));
}

Deno.test("a stranger cannot open, list, feed, seal or probe a run at prove serve: each door refuses before reading the body, and counts it", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const victim = await openInStore(t.store, "run-20261130T120000Z-000f00d1");
  const opened = await openWith(daemon, victim.writer.runId);
  const next = await openInStore(t.store, "run-20261130T120000Z-000f00d2"); // live, not yet opened
  const port = daemon.port;
  const json = "application/json";
  const body = (id: string) => JSON.stringify({ run_id: id });
  const traces = new URL(opened.traces_url).pathname;
  const seal = new URL(opened.seal_url).pathname;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const open = { path: "/runs", first: body(next.writer.runId) };
  const attacks: [string, Parameters<typeof raw>[1], number][] = [
    ["a cross-site text/plain POST opens a run", {
      ...open,
      headers: {
        origin: "https://evil.example",
        "content-type": "text/plain",
        "sec-fetch-site": "cross-site",
      },
    }, 403],
    ["a page on another port of 127.0.0.1 opens a run", {
      ...open,
      headers: { origin: "http://127.0.0.1:1", "content-type": "text/plain" },
    }, 403],
    ["DNS rebinding (Host: evil.example) opens a run", {
      ...open,
      headers: { host: `evil.example:${port}`, "content-type": json },
    }, 421],
    ["DNS rebinding lists the open runs", {
      method: "GET",
      path: "/runs",
      headers: { host: `evil.example:${port}` },
      endless: false,
    }, 421],
    ["a preflight for a cross-site JSON POST", {
      method: "OPTIONS",
      path: "/runs",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
      endless: false,
    }, 403],
    ["a run's ID alone opens the run", { ...open, headers: { "content-type": json } }, 401],
    ["a guessed secret opens the run", {
      ...open,
      headers: { "content-type": json, ...bearer("0".repeat(64)) },
    }, 401],
    ["the run's ingest key opens another run", {
      ...open,
      headers: { "content-type": json, ...bearer(opened.ingest_key) },
    }, 401],
    ["a stranger lists the open runs", { method: "GET", path: "/runs", endless: false }, 401],
    ["spans sent to a traces address from the record, without its key", {
      path: traces,
      headers: { "content-type": json },
    }, 401],
    ["spans sent with the daemon's secret instead of the run's key", {
      path: traces,
      headers: { "content-type": json, ...bearer(daemon.secret) },
    }, 401],
    ["spans sent with the writer's key instead of the ingest key", {
      path: traces,
      headers: { "content-type": json, ...bearer(opened.writer_key) },
    }, 401],
    ["a cross-site page sends spans with the key", {
      path: traces,
      headers: { "content-type": "text/plain", origin: "https://evil.example", ...bearer(opened.ingest_key) },
    }, 403],
    ["the run's program seals its own run", { path: seal, headers: bearer(opened.ingest_key) }, 401],
    ["a stranger seals the run", { path: seal }, 401],
    ["a stranger probes for a run's handle", {
      path: `/runs/${"0".repeat(32)}/v1/traces`,
      headers: { "content-type": json, ...bearer(opened.ingest_key) },
    }, 401],
    ["a stranger probes other paths", { method: "GET", path: "/admin", endless: false }, 401],
  ];
  const probes: string[] = [];
  for (const [name, request, expected] of attacks) {
    const before = daemon.refusals[expected] ?? 0;
    const { status, text } = await raw(port, request);
    const stopped = status === expected && !text.includes(next.writer.runId) &&
      !text.includes(victim.writer.runId) && !/access-control-allow/i.test(text);
    tally.add(name, { stopped, recorded: (daemon.refusals[expected] ?? 0) === before + 1 });
    assert.equal(status, expected, `${name}: ${text}`);
    if (name.includes("probes for")) probes.push(text.slice(text.indexOf("\r\n\r\n") + 4));
  }
  // a probe learns nothing: an unknown handle and a wrong key get the same answer
  const wrongKey = await postSpans(opened, "{}", "1".repeat(64));
  assert.equal(wrongKey.status, 401);
  assert.equal((await wrongKey.json()).message, JSON.parse(probes[0]!).message);
  // no answer gave a CORS header a browser would honour
  const preflight = await fetch(`${daemon.url}/runs`, {
    method: "OPTIONS",
    headers: { origin: "https://evil.example" },
  });
  assert.equal(preflight.headers.get("access-control-allow-origin"), null);
  await preflight.body?.cancel();
  // after all of it: the next run still opens for its writer, the victim's run holds nothing of a stranger's,
  // and its writer seals it
  const mine = await openRequest(daemon, next.writer.runId);
  assert.equal(mine.status, 201);
  await mine.body?.cancel();
  const sealed = await sealWith(opened);
  assert.deepEqual([sealed.spans, sealed.events.length], [0, 0]);
  assert.deepEqual(await readSpansFile(victim.writer.folder), []);
});

Deno.test("prove serve opens no run its store has sealed or cut, takes no spans for one sealed or cut since, and lets go of it", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store);
  const attempts: [string, () => Promise<{ status: number; recorded: boolean }>][] = [
    ["open a run sealed in the store", async () => {
      const run = await openInStore(t.store, "run-20261130T120000Z-00005ea1");
      await run.recorder.seal();
      const r = await openRequest(daemon, run.writer.runId);
      await r.body?.cancel();
      return { status: r.status, recorded: (daemon.refusals[409] ?? 0) > 0 };
    }],
    ["open a run whose writer was killed", async () => {
      const writer = await writerProcess(t.runs, "run-20261130T120000Z-00000c71");
      await writer.kill();
      const before = daemon.refusals[409] ?? 0;
      const r = await openRequest(daemon, "run-20261130T120000Z-00000c71");
      await r.body?.cancel();
      return { status: r.status, recorded: daemon.refusals[409] === before + 1 };
    }],
    ["send spans to a run its writer sealed in the store since", async () => {
      const run = await openInStore(t.store, "run-20261130T120000Z-00005ea2");
      const opened = await openWith(daemon, run.writer.runId);
      await run.recorder.seal();
      const r = await postSpans(opened, jsonSpans(1));
      await r.body?.cancel();
      const rows = await readSpansFile(run.writer.folder);
      return {
        status: rows.length === 0 ? r.status : 200,
        recorded: !daemon.open.includes(run.writer.runId),
      };
    }],
    ["send spans to a run whose writer was killed since", async () => {
      const id = "run-20261130T120000Z-00000c72";
      const writer = await writerProcess(t.runs, id);
      const opened = await openWith(daemon, id);
      const held = await postSpans(opened, jsonSpans(2));
      await held.body?.cancel();
      await writer.kill();
      const r = await postSpans(opened, jsonSpans(1));
      await r.body?.cancel();
      const seal = await sealRequest(opened);
      await seal.body?.cancel();
      // let go: nobody can collect what it held
      return { status: r.status, recorded: seal.status === 409 && !daemon.open.includes(id) };
    }],
  ];
  for (const [name, attempt] of attempts) {
    const { status, recorded } = await attempt();
    tally.add(name, { stopped: status === 409, recorded });
    assert.equal(status, 409, name);
    assert.ok(recorded, name);
  }
});

/** A receiver in a child process, its memory watched while it takes one request. */
async function inChild(kind: "daemon" | "receiver", body: Uint8Array<ArrayBuffer>) {
  await using t = await tempStore();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "-A", new URL("./_serve_child.ts", import.meta.url).pathname, kind, t.runs],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const line = async () => {
    let said = "";
    while (!said.includes("\n")) said += (await lines.read()).value ?? "";
    return JSON.parse(said);
  };
  const ready = await line() as { traces: string; headers: Record<string, string>; cap: number };
  const started = performance.now();
  const r = await fetch(ready.traces, {
    method: "POST",
    headers: { ...ready.headers, "content-type": "application/x-protobuf", "content-encoding": "gzip" },
    body,
  });
  const ms = performance.now() - started;
  const text = await r.text();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode("report\n"));
  await writer.close();
  const { peak, rest } = await line() as { peak: number; rest: number };
  lines.releaseLock();
  await child.stdout.cancel().catch(() => {});
  await child.status;
  return { status: r.status, text, ms, growth: peak - rest, cap: ready.cap };
}

Deno.test("a 1 GiB gzip bomb gets its 413 at once, at prove serve and at a run's own receiver, and neither grows by twice the cap", async () => {
  const bomb = gzipBomb(1024);
  assert.ok(bomb.byteLength < 1.1e6);
  for (const kind of ["daemon", "receiver"] as const) {
    const { status, text, ms, growth, cap } = await inChild(kind, bomb);
    // the time is printed, not asserted: a test never depends on an idle machine
    console.log(
      `${kind}: 1 GiB gzip bomb: ${status} in ${Math.round(ms)} ms, resident memory +${
        (growth / 2 ** 20).toFixed(1)
      } MiB (cap ${cap / 2 ** 20} MiB)`,
    );
    const stopped = status === 413 && growth < 2 * cap;
    tally.add(`a 1 GiB gzip bomb at the ${kind}`, { stopped, recorded: /unpacks to over/.test(text) });
    assert.equal(status, 413, text);
    assert.ok(growth < 2 * cap, `${kind} grew by ${growth} bytes`);
  }
});

Deno.test("prove serve and a run's own receiver bound what one request and one run may send, refuse the rest with 413, and tell the writer", async () => {
  await using t = await tempStore();
  const limits = { maxSpans: 50, maxBytes: 200_000, maxProblems: 5 };
  await using daemon = SpanDaemon.start(t.store, { maxBytes: 64 * 1024, maxSpans: 20, limits });
  const run = await openInStore(t.store, "run-20261130T120000Z-0000e4a0");
  const opened = await openWith(daemon, run.writer.runId);
  const own = await openInStore(t.store, "run-20261130T120000Z-0000e4a1");
  await using spans = receiver(t.store, own.recorder, { maxBytes: 64 * 1024, maxSpans: 20, limits });
  const atReceiver = (body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(spans.tracesUrl, {
      method: "POST",
      headers: { ...spans.headers, "content-type": "application/json", ...headers },
      body,
    });
  const atDaemon = (body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(opened.traces_url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${opened.ingest_key}`,
        "content-type": "application/json",
        ...headers,
      },
      body,
    });
  const chunked = () =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 100; i++) c.enqueue(new Uint8Array(1024));
        c.close();
      },
    });
  const attacks: [string, () => [BodyInit, Record<string, string>], number, RegExp][] = [
    [
      "a body over the cap, its length declared",
      () => ["x".repeat(100_000), {}],
      413,
      /is over the receiver's/,
    ],
    ["a body over the cap, sent in chunks", () => [chunked(), {}], 413, /is over the receiver's/],
    [
      "too many spans in one request",
      () => [jsonSpans(21), {}],
      413,
      /21 spans, over the receiver's limit of 20/,
    ],
    ["another content type", () => ["x", { "content-type": "text/plain" }], 415, /application\/x-protobuf/],
    ["an encoding other than gzip", () => ["x", { "content-encoding": "br" }], 400, /not gzip or none/],
  ];
  for (
    const [where, post, problems] of [["daemon", atDaemon, null], ["receiver", atReceiver, own]] as const
  ) {
    for (const [name, make, expected, says] of attacks) {
      const [body, headers] = make();
      const r = await post(body, headers);
      const message = await messageOf(r);
      tally.add(`${name} at the ${where}`, { stopped: r.status === expected, recorded: says.test(message) });
      assert.equal(r.status, expected, `${name} at the ${where}: ${message}`);
      assert.match(message, says);
    }
    // a run that sends without end: taken up to its limit, then refused, and told once
    let status = 200;
    for (let i = 0; i < 5 && status === 200; i++) {
      const r = await post(jsonSpans(20));
      status = r.status;
      await r.body?.cancel();
    }
    const events = problems === null
      ? (await sealWith(opened)).events
      : readEventsText(await Deno.readTextFile(`${problems.writer.folder}/evidence/events.jsonl`)).events;
    const said = events.filter((e) => e.type === "telemetry_problem").map((e) => String(e.data!.problem));
    const told = said.some((p) => /passed its limit of 50 spans/.test(p));
    tally.add(`a run that sends without end, at the ${where}`, { stopped: status === 413, recorded: told });
    assert.equal(status, 413);
    assert.ok(told, said.join("\n"));
    // the problems themselves are bounded: 5, the last saying that the rest are only counted, and the one that
    // says the run passed its limit (and at the daemon, that it takes no more)
    assert.equal(said.length, where === "daemon" ? 7 : 6, said.join("\n"));
    assert.match(said[4]!, /limit of 5 problems a run is reached/);
    // what the run sent before its limit is kept, at the daemon as at the receiver
    const spansTaken = events.filter((e) => e.type === "spans_received")
      .reduce((n, e) => n + (e.data!.spans as number), 0);
    assert.equal(spansTaken, 40);
  }
});

Deno.test("prove serve cannot be filled: runs past maxRuns are not opened, and spans past maxHeldBytes for all runs wait (503)", async () => {
  await using t = await tempStore();
  await using daemon = SpanDaemon.start(t.store, { maxRuns: 2, maxHeldBytes: 3000 });
  const ids = [
    "run-20261130T120000Z-0000f1a1",
    "run-20261130T120000Z-0000f1a2",
    "run-20261130T120000Z-0000f1a3",
  ];
  for (const id of ids) await openInStore(t.store, id);
  const [a, b] = [await openWith(daemon, ids[0]!), await openWith(daemon, ids[1]!)];
  const before = daemon.refusals[503] ?? 0;
  const third = await openRequest(daemon, ids[2]!);
  const says = (await third.json()).error as string;
  tally.add("open runs past the daemon's limit", {
    stopped: third.status === 503,
    recorded: daemon.refusals[503] === before + 1 && /limit of 2 open runs/.test(says),
  });
  assert.equal(third.status, 503, says);
  const big = await postSpans(a, jsonSpans(20));
  assert.equal(big.status, 200);
  await big.body?.cancel();
  const held = await postSpans(b, jsonSpans(1));
  const message = (await held.json()).message as string;
  const sealed = await sealWith(b);
  tally.add("spans past what the daemon holds for all runs", {
    stopped: held.status === 503,
    recorded: sealed.refused === 1 && /holds its limit of 3000 bytes/.test(message),
  });
  assert.equal(held.status, 503, message);
});

Deno.test("a run's own receiver refuses a stranger, a rebinding page and a cross-site page before reading the body, and counts them", async () => {
  await using t = await tempStore();
  const run = await openInStore(t.store, "run-20261130T120000Z-0000e4a2");
  await using spans = receiver(t.store, run.recorder);
  const port = new URL(spans.url).port;
  const attacks: [string, Record<string, string>, number][] = [
    ["spans without the run's key", {}, 401],
    ["spans with a guessed key", { authorization: `Bearer ${"0".repeat(64)}` }, 401],
    ["DNS rebinding (Host: evil.example)", { ...spans.headers, host: `evil.example:${port}` }, 421],
    ["a cross-site page", { ...spans.headers, origin: "https://evil.example" }, 403],
  ];
  for (const [name, headers, expected] of attacks) {
    const before = spans.strangers;
    const { status } = await raw(Number(port), {
      path: "/v1/traces",
      headers: { "content-type": "application/json", ...headers },
    });
    tally.add(`${name} at a run's receiver`, {
      stopped: status === expected,
      recorded: spans.strangers === before + 1,
    });
    assert.equal(status, expected, name);
  }
  assert.equal(spans.spans, 0);
  assert.equal(run.recorder.count, 1);
});

Deno.test("the serve attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});
