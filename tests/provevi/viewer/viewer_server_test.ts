import assert from "node:assert/strict";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { guardRequest } from "../../../lib/provevi/viewer/viewer_guard.ts";
import { serveViewer, viewerHandler } from "../../../lib/provevi/viewer/viewer_server.ts";
import type { RunView } from "../../../lib/provevi/viewer/run_view.ts";
import type { TraceView } from "../../../lib/provevi/viewer/trace_view.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { copyFolder } from "../../_files.ts";
import { join } from "node:path";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import type { Assessment } from "../../../lib/provevi/store/assess.ts";
import { writeRichRun } from "../_rich_run.ts";

const RUN = "run-20261129T120000Z-0badc0de";
const FIXTURES = new URL("../../../fixtures/", import.meta.url).pathname;
const PORT = 5123;
const TOKEN = "a".repeat(64);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const BASE = `${ORIGIN}/t/${TOKEN}`;
const policy = (level: string) =>
  TelemetryPolicy.parse(`version: 1\ndestinations:\n  browser:\n    kind: live\n    receives: ${level}\n`);

function handler(runs: string, level: string | null) {
  return viewerHandler(new FileStore({ runs }), {
    policy: level === null ? TelemetryPolicy.denyAll() : policy(level),
    port: PORT,
    token: TOKEN,
  });
}

function get(path: string, headers: Record<string, string> = {}): Request {
  return new Request(`${BASE}${path}`, { headers: { host: `127.0.0.1:${PORT}`, ...headers } });
}

Deno.test("the guard refuses a Host that is not the viewer's own, against DNS rebinding", () => {
  for (const host of [`evil.example:${PORT}`, "127.0.0.1:80", `127.0.0.1.nip.io:${PORT}`, ""]) {
    const r = guardRequest(new Request(`${BASE}/`, { headers: { host } }), {
      port: PORT,
      token: TOKEN,
    });
    assert.equal(r?.status, 421, host);
  }
  assert.equal(guardRequest(get("/"), { port: PORT, token: TOKEN }), null);
  const local = new Request(`http://localhost:${PORT}/t/${TOKEN}/`, {
    headers: { host: `localhost:${PORT}` },
  });
  assert.equal(guardRequest(local, { port: PORT, token: TOKEN }), null);
});

Deno.test("the guard refuses an address without the token, or with a wrong one, and never redirects", () => {
  const guard = (url: string, headers: Record<string, string> = {}) =>
    guardRequest(new Request(url, { headers: { host: `127.0.0.1:${PORT}`, ...headers } }), {
      port: PORT,
      token: TOKEN,
    });
  for (
    const url of [
      `${ORIGIN}/api/runs`,
      `${ORIGIN}/?token=${TOKEN}`,
      `${ORIGIN}/runs/x?token=${TOKEN}`,
      `${ORIGIN}/t/${"b".repeat(64)}/api/runs`,
      `${ORIGIN}/t/${TOKEN.slice(1)}/`,
      `${ORIGIN}/t/${TOKEN}x/`,
      `${ORIGIN}/t/`,
    ]
  ) {
    const r = guard(url);
    assert.equal(r?.status, 403, url);
    assert.equal(r?.headers.get("location"), null);
  }
  // A cookie is no token: the viewer sets none and reads none.
  assert.equal(guard(`${ORIGIN}/api/runs`, { cookie: `prove_ui_${PORT}=${TOKEN}` })?.status, 403);
  assert.equal(guard(`${BASE}/api/runs`), null);
  assert.equal(guard(`${BASE}`), null);
});

Deno.test("the guard refuses a write that is not a POST from the viewer's own origin", () => {
  const post = (headers: Record<string, string>, method = "POST") =>
    guardRequest(
      new Request(`${BASE}/api/runs/${RUN}/assessments`, {
        method,
        headers: { host: `127.0.0.1:${PORT}`, ...headers },
        body: "{}",
      }),
      { port: PORT, token: TOKEN },
    );
  assert.equal(post({})?.status, 403, "no Origin");
  assert.equal(post({ origin: "http://evil.example" })?.status, 403);
  assert.equal(post({ origin: `http://127.0.0.1:${PORT + 1}` })?.status, 403);
  assert.equal(post({ origin: ORIGIN, "sec-fetch-site": "cross-site" })?.status, 403);
  assert.equal(post({ origin: ORIGIN }, "PUT")?.status, 405);
  assert.equal(post({ origin: ORIGIN }, "DELETE")?.status, 405);
  assert.equal(post({ origin: ORIGIN, "sec-fetch-site": "same-origin" }), null);
});

Deno.test("the viewer refuses to add an assessment when it was not given the store to write", async () => {
  const handle = handler(`${FIXTURES}runs`, "names");
  const r = await handle(
    new Request(`${BASE}/api/runs/${RUN}/assessments`, {
      method: "POST",
      headers: { host: `127.0.0.1:${PORT}`, origin: ORIGIN, "content-type": "application/json" },
      body: JSON.stringify({ name: "correct", value: true }),
    }),
  );
  assert.equal(r.status, 403);
});

Deno.test("the runs page's data lists the store's runs with their status and agent", async () => {
  const r = await handler(`${FIXTURES}runs`, "names")(get("/api/runs?limit=10"));
  assert.equal(r.status, 200);
  const page = await r.json();
  assert.equal(page.total, 1);
  assert.equal(page.runs[0].run_id, RUN);
  assert.equal(page.runs[0].status, "completed");
  assert.equal(page.runs[0].agent, "acme/demo/dev/revenue-question");
  assert.equal(
    (await (await handler(`${FIXTURES}runs`, "names")(get("/api/runs?status=failed"))).json()).total,
    0,
  );
});

Deno.test("with no live destination a run shows only its structure, the verdict, and which policy line would show more", async () => {
  const view: RunView = await (await handler(`${FIXTURES}runs`, null)(get(`/api/runs/${RUN}`))).json();
  assert.equal(view.verdict.ok, true);
  assert.equal(view.level, null);
  assert.match(view.note!, /names no live viewer.*kind: live, receives: bodies/);
  assert.ok(view.events.length > 5);
  assert.ok(view.events.every((e) => e.shown === null && e.answer === undefined));
  assert.ok(view.events.every((e) => /^[0-9a-f]{64}$/.test(e.line_sha256)));
  assert.deepEqual(view.settings, {});
  assert.ok(view.spans.length > 1);
});

Deno.test("at bodies a run that verifies is shown from its replay, with its answer, inputs and outputs", async () => {
  const view: RunView = await (await handler(`${FIXTURES}runs`, "bodies")(get(`/api/runs/${RUN}`))).json();
  assert.equal(view.verdict.ok, true);
  assert.equal(view.note, null);
  const call = view.events.find((e) => e.type === "model_called")!;
  assert.equal(call.answer, "Revenue grew 12% in Q3.\n");
  assert.ok(view.inputs.length >= 1 && view.inputs.every((i) => typeof i.uri === "string"));
  assert.deepEqual(view.outputs.map((o) => o.path), ["answer.txt"]);
  const names: RunView = await (await handler(`${FIXTURES}runs`, "names")(get(`/api/runs/${RUN}`))).json();
  assert.equal(names.events.find((e) => e.type === "model_called")!.answer, undefined);
  assert.ok(names.inputs.every((i) => i.uri === null));
  assert.match(names.note!, /receives: bodies/);
});

Deno.test("a tampered run shows its problem, and its content only when asked, marked untrusted", async () => {
  const handle = handler(`${FIXTURES}runs-tampered`, "bodies");
  const view: RunView = await (await handle(get(`/api/runs/${RUN}`))).json();
  assert.equal(view.verdict.ok, false);
  assert.match(view.verdict.problems.map((p) => p.message).join("\n"), /line 10 \(seq 9\) has prev/);
  assert.ok(view.events.every((e) => e.shown === null && e.answer === undefined));
  const asked: RunView = await (await handle(get(`/api/runs/${RUN}?untrusted=1`))).json();
  assert.equal(asked.untrusted, true);
  assert.ok(asked.events.some((e) => e.shown !== null));
});

Deno.test("a run that is not in the store is a 404 with a one-line error, and a path is not a run ID", async () => {
  const handle = handler(`${FIXTURES}runs`, null);
  const r = await handle(get("/api/runs/run-20990101T000000Z-00000000"));
  assert.equal(r.status, 404);
  assert.match((await r.json()).error, /run-20990101T000000Z-00000000/);
  assert.equal((await handle(get("/api/runs/.hidden"))).status, 404);
  const path = await handle(get("/api/runs/..%2F..%2Fetc"));
  assert.equal(path.status, 400);
  assert.match((await path.json()).error, /slash/);
});

Deno.test("the file store answers the agents page with how to get an indexed store", async () => {
  const r = await handler(`${FIXTURES}runs`, "names")(get("/api/agents"));
  assert.equal(r.status, 400);
  assert.match((await r.json()).error, /sqlite/);
});

Deno.test("pages, script and style are served from the module tree, with a strict content policy", async () => {
  const handle = handler(`${FIXTURES}runs`, null);
  for (
    const [path, type] of [["/", "text/html"], ["/runs/x", "text/html"], [
      "/assets/app.js",
      "text/javascript",
    ], [
      "/assets/app.css",
      "text/css",
    ]]
  ) {
    const r = await handle(get(path!));
    assert.equal(r.status, 200, path);
    assert.match(r.headers.get("content-type")!, new RegExp(type!));
    assert.match(r.headers.get("content-security-policy")!, /default-src 'none'; script-src 'self'/);
    await r.body?.cancel();
  }
});

Deno.test("serveViewer() listens on 127.0.0.1 only, and a raw request with another Host is refused", async () => {
  await using viewer = await serveViewer(new FileStore({ runs: `${FIXTURES}runs` }), {
    policy: TelemetryPolicy.denyAll(),
    port: 0,
  });
  assert.match(viewer.url, /^http:\/\/127\.0\.0\.1:\d+\/t\/[0-9a-f]{64}\/$/);
  const ok = await fetch(viewer.url, { redirect: "manual" });
  assert.equal(ok.status, 200);
  assert.match(await ok.text(), new RegExp(`<script type="module" src="/t/${viewer.token}/assets/app.js">`));
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: viewer.port });
  await conn.write(
    new TextEncoder().encode(
      `GET /t/${viewer.token}/api/runs HTTP/1.1\r\nHost: attacker.example:${viewer.port}\r\nConnection: close\r\n\r\n`,
    ),
  );
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(4096);
  for (;;) {
    const n = await conn.read(buffer);
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
  }
  conn.close();
  const reply = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  assert.match(reply, /^HTTP\/1\.1 421/);
  await assert.rejects(Deno.connect({ hostname: "::1", port: viewer.port }));
});

Deno.test("the runs page shows names only from names, counts only from usage, and no agents or experiments without a live viewer", async () => {
  const rowOf = async (level: string | null) => {
    const r = await handler(`${FIXTURES}runs`, level)(get("/api/runs"));
    assert.equal(r.status, 200);
    return ((await r.json()) as { runs: Record<string, unknown>[] }).runs.find((x) => x.run_id === RUN)!;
  };
  const none = await rowOf(null);
  assert.deepEqual([none.agent, none.model, none.tokens, none.experiment], [null, null, null, null]);
  assert.equal(none.status, "completed");
  const names = await rowOf("names");
  assert.equal(names.agent, "acme/demo/dev/revenue-question");
  assert.equal(names.tokens, null);
  const usage = await rowOf("usage");
  assert.equal(usage.tokens, 23);
  const agents = await handler(`${FIXTURES}runs`, null)(get("/api/agents"));
  assert.deepEqual(await agents.json(), []);
  assert.equal((await handler(`${FIXTURES}runs`, null)(get("/api/agent?name=x"))).status, 404);
});

Deno.test("a file store's viewer adds an assessment to a sealed run's assessments.jsonl, and the run verifies", async () => {
  const runs = await Deno.makeTempDir({ prefix: "viewer-assess-" });
  try {
    await copyFolder(`${FIXTURES}runs/${RUN}`, `${runs}/${RUN}`);
    const handle = viewerHandler(new FileStore({ runs }), {
      policy: policy("bodies"),
      port: PORT,
      token: TOKEN,
      openToWrite: () => Promise.resolve(new FileStore({ runs })),
    });
    assert.equal((await (await handle(get("/api/info"))).json()).assess, true);
    const r = await handle(
      new Request(`${BASE}/api/runs/${RUN}/assessments`, {
        method: "POST",
        headers: { host: `127.0.0.1:${PORT}`, origin: ORIGIN, "content-type": "application/json" },
        body: JSON.stringify({ name: "correct", value: true, rationale: "adds up" }),
      }),
    );
    assert.equal(r.status, 201, await r.clone().text());
    const view = await (await handle(get(`/api/runs/${RUN}`))).json() as RunView;
    assert.deepEqual(view.assessments?.map((a) => [a.name, a.value, a.rationale]), [[
      "correct",
      true,
      "adds up",
    ]]);
    const check = await verifyRun(await new FileStore({ runs }).readRun(RUN));
    assert.deepEqual(check.problems, []);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("a trace's page data: its spans across runs, nested, each with its run and events, names cut to the level", async () => {
  const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const bodies = await (await handler(`${FIXTURES}runs`, "bodies")(get(`/api/traces/${trace}`)))
    .json() as TraceView;
  assert.deepEqual([bodies.trace_id, bodies.runs, bodies.total, bodies.next], [trace, [RUN], 8, null]);
  assert.deepEqual(
    bodies.spans.map((s) => [s.name, s.depth, s.seqs.join(",")]).slice(0, 2),
    [["invoke_agent revenue-question", 0, "0,12"], ["access_requested", 1, "1,2"]],
  );
  const chat = bodies.spans.find((s) => s.span_id === "0000000000000006")!;
  assert.deepEqual([chat.name, chat.depth, chat.parent_span_id, chat.run_id], [
    "chat answer",
    2,
    "0000000000000005",
    RUN,
  ]);
  assert.equal(chat.end_us! - chat.start_us!, 1400); // as prove trace says: 1.4ms
  // With no live viewer, a span's name shows only as its operation.
  const structure = await (await handler(`${FIXTURES}runs`, null)(get(`/api/traces/${trace}`)))
    .json() as TraceView;
  assert.deepEqual(structure.spans.map((s) => s.name).slice(0, 1), ["invoke_agent"]);
  const paged =
    await (await handler(`${FIXTURES}runs`, "names")(get(`/api/traces/${trace}?limit=3&offset=3`)))
      .json() as TraceView;
  assert.deepEqual([paged.spans.length, paged.next], [3, 6]);
});

Deno.test("a trace ID that is not one is a 400, and one no run carries a 404, each with one line", async () => {
  const handle = handler(`${FIXTURES}runs`, "names");
  for (
    const [path, status] of [["/api/traces/nope", 400], ["/api/traces/" + "0".repeat(32), 400], [
      "/traces/x%2F",
      400,
    ], [`/api/traces/${"f".repeat(32)}`, 404]] as const
  ) {
    const r = await handle(get(path));
    assert.equal(r.status, status, path);
    const said = await r.text();
    assert.ok(!said.trim().includes("\n"), said);
  }
  assert.equal((await handle(get(`/traces/${"f".repeat(32)}`))).status, 200); // the page, which then asks the API
});

Deno.test("the experiments page's data holds the experiment's assessments, cut to the level, and takes a new one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "viewer-exp-" });
  const EXP = "experiment://acme/risk/dev/credit/q";
  const PIN = `${EXP}?at=commit:${"1".repeat(40)}`;
  try {
    const db = join(dir, "e.db");
    {
      await using store = new SqliteStore(db, { runs: dir });
      await writeRichRun(await store.openRun("run-1"), { experiment: EXP, experimentPin: PIN });
      await store.assess({ experiment: EXP }, "approved", true, {
        rationale: "the board said so",
        source: "ada",
      });
    }
    const at = (level: string) =>
      viewerHandler(new SqliteStore(db, { runs: dir, create: false }), {
        policy: policy(level),
        port: PORT,
        token: TOKEN,
        openToWrite: () => Promise.resolve(new SqliteStore(db, { runs: dir })),
      });
    const uri = `/api/experiment?uri=${encodeURIComponent("credit/q")}`;
    const bodies = await (await at("bodies")(get(uri))).json();
    assert.deepEqual(
      bodies.assessments.map((a: Assessment) => [a.name, a.value, a.experiment, a.rationale]),
      [["approved", true, EXP, "the board said so"]],
    );
    const names = await (await at("names")(get(uri))).json();
    assert.equal(names.assessments[0].rationale, undefined);
    const post = (body: unknown) =>
      at("bodies")(
        new Request(`${BASE}/api/experiment/assessments`, {
          method: "POST",
          headers: { host: `127.0.0.1:${PORT}`, origin: ORIGIN, "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
    const added = await post({ experiment: PIN, name: "score", value: 0.7 });
    assert.equal(added.status, 201, await added.clone().text());
    assert.equal((await added.json()).experiment, PIN);
    assert.equal((await (await at("bodies")(get(uri))).json()).assessments.length, 2);
    for (
      const [body, status] of [
        [{ name: "x", value: 1 }, 400],
        [{ experiment: "nothing", name: "x", value: 1 }, 400],
        [{ experiment: EXP, value: 1 }, 400],
      ] as const
    ) {
      const r = await post(body);
      assert.equal(r.status, status, JSON.stringify(body));
      assert.ok(!(await r.text()).trim().includes("\n"));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
