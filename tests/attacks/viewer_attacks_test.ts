/**
 * The viewer's doors (issue #23): a token that reaches no other port, no redirect off the viewer, every bad
 * request a 4xx of one line (never a 500, never a redirect, never the token echoed), and pages bounded
 * whatever a run holds. The requests go to a real `serveViewer` over TCP as written here, byte for byte, so
 * that no client tidies them first; and in-process through `viewerHandler`, for the routes' own refusals.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/policy.ts";
import { serveViewer, viewerHandler } from "../../lib/provevi/viewer/viewer_server.ts";
import { writeRun } from "../provevi/viewer/_runs.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("viewer attacks");
const LABELS = { stopped: "refused with a 4xx, no redirect", recorded: "said why in one line" };
const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname;
const RUN = "run-20261129T120000Z-0badc0de";
const BODIES = TelemetryPolicy.parse(
  "version: 1\ndestinations:\n  browser:\n    kind: live\n    receives: bodies\n",
);

/** Sends raw bytes to a port and reads the whole answer: status, headers, body. */
async function raw(port: number, request: string): Promise<{ status: number; head: string; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  // An answer that never ends is a failure of its own, not a hung test.
  const timer = setTimeout(() => conn.close(), 30_000);
  try {
    await conn.write(new TextEncoder().encode(request));
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(65536);
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
    }
    const text = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
    const [head, ...body] = text.split("\r\n\r\n");
    return {
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head!)?.[1] ?? 0),
      head: head!,
      body: body.join("\r\n\r\n"),
    };
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
}

/** Whether an answer refuses as it must: a 4xx, no redirect, one line, and not the token. */
function judged(
  name: string,
  answer: { status: number; location: string | null; body: string },
  token: string,
): { stopped: boolean; recorded: boolean } {
  const lines = answer.body.replace(/\n$/, "").split("\n");
  // A 4xx that Deno's server gives itself (a request it cannot parse) has an empty body: it is still no page.
  const oneLine = lines.length === 1 && answer.body.length < 600;
  const outcome = {
    stopped: answer.status >= 400 && answer.status < 500 && answer.location === null,
    recorded: oneLine && !answer.body.includes(token),
  };
  tally.add(name, outcome);
  return outcome;
}

Deno.test("bad requests over TCP, as written, are each a 4xx of one line: never a 500, a redirect, or the token", async () => {
  await using viewer = await serveViewer(new FileStore({ runs: `${FIXTURES}runs` }), {
    policy: BODIES,
    port: 0,
  });
  const t = viewer.token;
  const host = `127.0.0.1:${viewer.port}`;
  const get = (target: string, method = "GET", extra = "") =>
    `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n${extra}\r\n`;
  const attacks: [string, string][] = [
    ["a protocol-relative path with the token in the query", get(`//evil.example/?token=${t}`)],
    ["a backslash path with the token in the query", get(`/\\evil.example/?token=${t}`)],
    ["the old ?token= address", get(`/?token=${t}`)],
    ["a protocol-relative path under the token", get(`/t/${t}//evil.example/`)],
    ["a backslash path under the token", get(`/t/${t}/\\evil.example/`)],
    ["an encoded backslash under the token", get(`/t/${t}/%5Cevil.example/`)],
    ["an encoded slash in a run ID", get(`/t/${t}/api/runs/..%2F..%2Fetc%2Fpasswd`)],
    ["a lone percent", get(`/t/${t}/api/runs/%`)],
    ["a percent with one digit", get(`/t/${t}/api/runs/%4`)],
    ["percent-encoded bytes that are not UTF-8", get(`/t/${t}/api/runs/%FF%FE`)],
    ["an overlong UTF-8 dot", get(`/t/${t}/api/runs/%C0%AE%C0%AE`)],
    ["an encoded NUL", get(`/t/${t}/api/runs/run%00x`)],
    ["an encoded newline", get(`/t/${t}/api/runs/run%0D%0ASet-Cookie:x=1`)],
    ["encoded dot parts", get(`/t/${t}/%2e%2e/%2e%2e/etc/passwd`)],
    ["a double-encoded dot part", get(`/t/${t}/api/runs/%252e%252e`)],
    ["a run ID that starts with a dot", get(`/t/${t}/api/runs/.hidden`)],
    ["a run that is not in the store", get(`/t/${t}/api/runs/run-20990101T000000Z-00000000`)],
    ["an unknown address", get(`/t/${t}/api/nothing`)],
    ["an unknown page", get(`/t/${t}/admin`)],
    ["an address under an asset", get(`/t/${t}/assets/app.js/x`)],
    ["a payload hash that is not one", get(`/t/${t}/api/runs/${RUN}/payloads/xyz`)],
    ["a payload hash in capitals", get(`/t/${t}/api/runs/${RUN}/payloads/${"A".repeat(64)}`)],
    ["a payload no event of the run names", get(`/t/${t}/api/runs/${RUN}/payloads/${"0".repeat(64)}`)],
    ["an event seq that is not a number", get(`/t/${t}/api/runs/${RUN}/events/-1`)],
    ["an event seq past the run", get(`/t/${t}/api/runs/${RUN}/events/999999`)],
    ["an answer of an event that has none", get(`/t/${t}/api/runs/${RUN}/events/0/answer`)],
    ["a page number that is not one", get(`/t/${t}/api/runs/${RUN}/events?after=NaN`)],
    ["a page number too large", get(`/t/${t}/api/runs?limit=99999999999`)],
    ["a negative offset", get(`/t/${t}/api/runs?offset=-5`)],
    ["a status that is not one", get(`/t/${t}/api/runs?status=%3Cscript%3E`)],
    ["a huge query", get(`/t/${t}/api/runs?agent=${"a".repeat(9000)}`)],
    ["a huge path", get(`/t/${t}/${"a/".repeat(5000)}`)],
    ["a compare of paths", get(`/t/${t}/api/compare?a=../x&b=${RUN}`)],
    ["a compare of one run", get(`/t/${t}/api/compare?a=${RUN}`)],
    ["a verdict that is not one", get(`/t/${t}/api/runs?verdict=%3Cscript%3E`)],
    ["a cost that is not a number", get(`/t/${t}/api/runs?min_cost=1e999`)],
    ["a date that is not one", get(`/t/${t}/api/runs?until=2026-13-45`)],
    ["a search of more than 500 characters", get(`/t/${t}/api/runs?q=${"x".repeat(600)}`)],
    [
      "digests of more than 50 runs at once",
      get(
        `/t/${t}/api/digests?${
          Array.from({ length: 51 }, (_, i) => `run=${RUN.slice(0, -2)}${i + 10}`).join("&")
        }`,
      ),
    ],
    ["a digest of a path", get(`/t/${t}/api/digests?run=..%2F..%2Fetc`)],
    ["the messages of an event that holds none", get(`/t/${t}/api/runs/${RUN}/events/0/chat`)],
    ["the messages of an event past the run", get(`/t/${t}/api/runs/${RUN}/events/999999/chat`)],
    ["totals of nothing", get(`/t/${t}/api/totals`)],
    ["OPTIONS", get(`/t/${t}/api/runs`, "OPTIONS")],
    ["OPTIONS *", get("*", "OPTIONS")],
    ["PUT", get(`/t/${t}/api/runs/${RUN}/assessments`, "PUT", "Content-Length: 0\r\n")],
    ["DELETE", get(`/t/${t}/api/runs/${RUN}`, "DELETE")],
    ["TRACE", get(`/t/${t}/`, "TRACE")],
    ["PATCH", get(`/t/${t}/`, "PATCH", "Content-Length: 0\r\n")],
    [
      "a POST to a page that only reads",
      get(`/t/${t}/api/runs`, "POST", `Origin: http://${host}\r\nContent-Length: 0\r\n`),
    ],
    ["a GET of the address that only writes", get(`/t/${t}/api/runs/${RUN}/assessments`)],
    ["an absolute-form target of another host", get(`http://evil.example/t/${t}/`)],
    [
      "another Host",
      `GET /t/${t}/ HTTP/1.1\r\nHost: evil.example:${viewer.port}\r\nConnection: close\r\n\r\n`,
    ],
    ["no token", get("/api/runs")],
    ["a token one character short", get(`/t/${t.slice(1)}/api/runs`)],
    ["a cookie in place of the token", get("/api/runs", "GET", `Cookie: prove_ui_${viewer.port}=${t}\r\n`)],
    [
      "a POST from another origin",
      get(
        `/t/${t}/api/runs/${RUN}/assessments`,
        "POST",
        "Origin: http://evil.example\r\nContent-Length: 0\r\n",
      ),
    ],
  ];
  const missed: string[] = [];
  for (const [name, request] of attacks) {
    const answer = await raw(viewer.port, request);
    const location = /^location:\s*(.*)$/im.exec(answer.head)?.[1] ?? null;
    const outcome = judged(name, { status: answer.status, location, body: answer.body }, t);
    if (!outcome.stopped || !outcome.recorded) {
      missed.push(`${name}: ${answer.head.split("\r\n")[0]} ${answer.body}`);
    }
    assert.ok(!/^set-cookie:/im.test(answer.head), `${name} sets a cookie`);
  }
  assert.deepEqual(missed, []);
});

Deno.test("HEAD is a GET without its body, and a write's body past 64 KiB is refused unread", async () => {
  const token = "d".repeat(64);
  const handle = viewerHandler(new FileStore({ runs: `${FIXTURES}runs` }), {
    policy: BODIES,
    port: 5125,
    token,
    openToWrite: () => Promise.reject(new Error("not reached")),
  });
  const base = `http://127.0.0.1:5125/t/${token}/`;
  const headers = { host: "127.0.0.1:5125" };
  const head = await handle(new Request(`${base}api/runs/${RUN}`, { method: "HEAD", headers }));
  assert.equal(head.status, 200);
  assert.equal(head.body, null);
  const missing = await handle(new Request(`${base}api/runs/run-x`, { method: "HEAD", headers }));
  assert.equal(missing.status, 404);
  const big = await handle(
    new Request(`${base}api/runs/${RUN}/assessments`, {
      method: "POST",
      headers: { ...headers, origin: "http://127.0.0.1:5125", "content-type": "application/json" },
      body: JSON.stringify({ name: "x", value: "y".repeat(100_000) }),
    }),
  );
  const outcome = judged("a 100 KB assessment", {
    status: big.status,
    location: null,
    body: await big.text(),
  }, token);
  assert.equal(big.status, 413);
  assert.ok(outcome.recorded);
});

Deno.test("a run with a 20 MB answer and a hostile payload gives a page of a few hundred KB, and the whole on demand", async () => {
  const dir = await Deno.makeTempDir({ prefix: "viewer-attack-" });
  try {
    const runs = join(dir, "runs");
    const hostile = [
      "[".repeat(1_000_000), // nesting past any stack
      '{"text": "' + "\\u0041".repeat(200_000) + '"}', // a 1.2 MB answer all in escapes
      "\uFEFF" + '{"text": "a byte order mark"}',
      '{"__proto__": {"polluted": true}, "text": "x"}',
    ].map((t) => new TextEncoder().encode(t));
    hostile.push(Uint8Array.from({ length: 300_000 }, (_, i) => (i * 131) % 256)); // not UTF-8
    const runId = await writeRun(runs, { answers: [20_000_000, 1000], raw: hostile });
    const token = "e".repeat(64);
    const handle = viewerHandler(new FileStore({ runs }), { policy: BODIES, port: 5126, token });
    const get = (path: string) =>
      handle(
        new Request(`http://127.0.0.1:5126/t/${token}/${path}`, { headers: { host: "127.0.0.1:5126" } }),
      );
    const page = await (await get(`api/runs/${runId}`)).text();
    const view = JSON.parse(page);
    const call = view.events.find((e: { type: string }) => e.type === "model_called");
    const bounded = page.length < 512 * 1024 && call.answer.length <= 16 * 1024 &&
      call.cut?.answer?.size > 20e6;
    tally.add("a 20 MB answer on a run page", { stopped: bounded, recorded: call.cut?.answer !== undefined });
    assert.ok(bounded, `page ${page.length} bytes, answer ${call.answer.length}`);
    const whole = await (await get(`api/runs/${runId}/events/${call.seq}/answer`)).text();
    assert.equal(whole.length, 20_000_000 + "Answer 1: ".length);
    const payload = await get(`api/runs/${runId}/payloads/${call.shown.data.response_payload}`);
    assert.equal(payload.headers.get("content-type"), "text/plain; charset=utf-8");
    assert.match(payload.headers.get("content-security-policy")!, /^sandbox/);
    assert.equal((await payload.arrayBuffer()).byteLength, Number(payload.headers.get("content-length")));
    // The hostile payloads are shown cut, as text where they are not JSON; nothing is polluted.
    const raws = view.events.filter((e: { seq: number }) => e.seq >= 3 && e.seq <= 7);
    assert.equal(raws.length, 5);
    const shown = raws.every((e: { shown: { payload?: unknown } }) =>
      JSON.stringify(e.shown.payload ?? "").length < 70_000
    );
    tally.add("hostile payloads on a run page (deep nesting, escapes, a BOM, __proto__, not UTF-8)", {
      stopped: shown && ({} as Record<string, unknown>).polluted === undefined,
      recorded: raws.every((e: { cut?: unknown; payload_sha256: string }) => e.payload_sha256 !== null),
    });
    assert.ok(shown);
    // An answer all in escapes takes six bytes a character: its first 64 KiB hold some 10,900 of them.
    assert.ok(raws[1].answer.length > 10_000 && raws[1].answer.length <= 16 * 1024, raws[1].answer.length);
    assert.match(raws[1].answer, /^A+$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a model call's messages from hostile payloads are a bounded chat, never a 500", async () => {
  const dir = await Deno.makeTempDir({ prefix: "viewer-chat-attack-" });
  try {
    const runs = join(dir, "runs");
    const deep =
      '{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"n","input":' +
      "[".repeat(1_000_000) + "]".repeat(1_000_000) + "}]}]}";
    const many = '{"messages":[' + '{"role":"user","content":"hi"},'.repeat(400_000) + '{"role":"user"}]}';
    const long = '{"messages":[{"role":"user","content":"' + "a".repeat(20_000_000) + '"}]}';
    const parts = '{"content":[' + '{"type":"text","text":"x"},'.repeat(300_000) +
      '{"type":"text","text":"y"}]}';
    const hostile = [deep, many, long, parts].map((t) => new TextEncoder().encode(t));
    const runId = await writeRun(runs, { raw: hostile, runId: "run-20261130T120000Z-0000c4a7" });
    const token = "f".repeat(64);
    const handle = viewerHandler(new FileStore({ runs }), { policy: BODIES, port: 5127, token });
    const names = [
      "a tool call's arguments nested a million deep",
      "400,000 messages",
      "a 20 MB message",
      "300,000 parts of a reply",
    ];
    for (const [i, name] of names.entries()) {
      const r = await handle(
        new Request(`http://127.0.0.1:5127/t/${token}/api/runs/${runId}/events/${i + 1}/chat`, {
          headers: { host: "127.0.0.1:5127" },
        }),
      );
      const body = await r.text();
      const chat = r.status === 200 ? JSON.parse(body) : null;
      const bounded = r.status === 200 && body.length < 4 * 1024 * 1024 && chat.messages.length <= 300;
      tally.add(`messages of ${name}`, {
        stopped: bounded,
        recorded: chat?.cut === true || chat?.skipped > 0,
      });
      assert.ok(bounded, `${name}: ${r.status} ${body.length} bytes ${body.slice(0, 200)}`);
    }
    await handle.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the tally of the viewer attacks", () => {
  console.log(tally.line(LABELS));
  assert.deepEqual(tally.missed, []);
});
