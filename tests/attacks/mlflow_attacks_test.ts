/**
 * A malicious MLflow tracking server (allowed: the copy goes wherever the policy approves) against the copy's
 * client: replies of another shape (`{}` where a trace is due, an ID that is a terminal escape), replies that
 * never end (fast, or a byte at a time), and errors that echo the request's credentials back in every form a
 * server might (the header as is, the token in its message, its detail, its error code, encoded, split by
 * invisible characters, in the URL's user and password). Each is one line that names the server, holds no
 * credential, and leaves the process as it was (no TypeError, no reply held whole).
 * @module
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { ProveviError } from "../../lib/provevi/evidence/errors.ts";
import { copyRun } from "../../lib/provevi/mlflow/copy_run.ts";
import { MlflowClient, MlflowError } from "../../lib/provevi/mlflow/mlflow_client.ts";
import { endless, hostileMlflow, refusal, type Route } from "../provevi/mlflow/_hostile_mlflow.ts";
import { mlflowPolicy, storeWithRun } from "../provevi/mlflow/_mlflow.ts";
import { Tally } from "./_tally.ts";
import { isolateBytes } from "../_memory.ts";

const shapes = new Tally("mlflow reply attacks");
const echoes = new Tally("mlflow credential echo attacks");

const TOKEN = "mlf_9xQ2vLr7TzK4pW8n";
const USER = "ada";
const PASSWORD = "hunter2-Secret";
const BASIC = btoa(`${USER}:${PASSWORD}`);

/** The credentials a request carries with a token, and with a user and password. */
const CARRIED = { bearer: [TOKEN], basic: [PASSWORD, BASIC, `${USER}:${PASSWORD}`] };

/** Control characters, which would reach a terminal. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function oneLine(error: unknown, url: string): boolean {
  return error instanceof MlflowError && !error.message.includes("\n") &&
    error.message.startsWith(`MLflow at ${url} `) && !CONTROL.test(error.message);
}

/** The first credential the error's message holds, in any case. */
function leaks(
  error: unknown,
  secrets: readonly string[] = [...CARRIED.bearer, ...CARRIED.basic],
): string | null {
  const text = String((error as Error)?.message ?? error).toLowerCase();
  return secrets.find((s) => text.includes(s.toLowerCase())) ?? null;
}

const SHAPES: { name: string; routes: Record<string, Route>; call: (c: MlflowClient) => Promise<unknown> }[] =
  [
    {
      name: "{} where an experiment is due",
      routes: { "GET /api/2.0/mlflow/experiments/get-by-name": () => Response.json({}) },
      call: (c) => c.experimentId("acme/demo/dev/x"),
    },
    {
      name: "an experiment ID that is a terminal escape",
      routes: {
        "GET /api/2.0/mlflow/experiments/get-by-name": () =>
          Response.json({ experiment: { experiment_id: "1\u001b]0;pwned\u0007\n" } }),
      },
      call: (c) => c.experimentId("acme/demo/dev/x"),
    },
    {
      name: "a run ID of another type",
      routes: {
        "POST /api/2.0/mlflow/runs/search": () => Response.json({ runs: [{ info: { run_id: 5 } }] }),
      },
      call: (c) => c.searchRuns("1", "tags.x = 'y'"),
    },
    {
      name: "search pages without end",
      routes: {
        "POST /api/2.0/mlflow/runs/search": () =>
          Response.json({
            runs: Array.from({ length: 1000 }, (_, i) => ({
              info: { run_id: i.toString(16).padStart(32, "0"), experiment_id: "1" },
            })),
            next_page_token: "more",
          }),
      },
      call: (c) => c.searchRuns("1", "tags.x = 'y'"),
    },
    {
      name: "the credential echoed as a key of a map where a text is due",
      routes: {
        "GET /api/3.0/mlflow/traces/x": () => Response.json({ tags: { [TOKEN]: 5 } }),
      },
      call: (c) =>
        c.call(
          "GET",
          "/api/3.0/mlflow/traces/x",
          null,
          "find the trace",
          z.object({ tags: z.record(z.string(), z.string()) }),
        ),
    },
    {
      name: "an answer that is not JSON",
      routes: { "GET /api/2.0/mlflow/experiments/get-by-name": () => new Response("<html>hello</html>") },
      call: (c) => c.experimentId("acme/demo/dev/x"),
    },
    {
      name: "an answer that never ends",
      routes: { "GET /api/2.0/mlflow/experiments/get-by-name": () => endless({ start: '{"experiment":"' }) },
      call: (c) => c.experimentId("acme/demo/dev/x"),
    },
    {
      name: "an error that never ends",
      routes: { "POST /api/2.0/mlflow/runs/search": () => endless({ status: 500 }) },
      call: (c) => c.searchRuns("1", "x"),
    },
    {
      name: "an answer that trickles a byte at a time",
      routes: { "GET /api/2.0/mlflow/experiments/get-by-name": () => endless({ chunk: 1, every: 50 }) },
      call: (c) => c.experimentId("acme/demo/dev/x"),
    },
    {
      name: "an answer that stalls after its headers",
      routes: {
        "GET /api/2.0/mlflow/experiments/get-by-name": () =>
          new Response(new ReadableStream({ pull: () => new Promise<void>(() => {}) }), {
            headers: { "content-type": "application/json" },
          }),
      },
      call: (c) => c.experimentId("acme/demo/dev/x"),
    },
  ];

for (const a of SHAPES) {
  Deno.test(`mlflow attack: ${a.name} is one line naming the server, and nothing is held whole`, async () => {
    await using server = hostileMlflow(a.routes);
    const client = new MlflowClient(server.url, { token: TOKEN, timeout: 3000 });
    const before = isolateBytes();
    const error = await a.call(client).then(() => null, (e: unknown) => e);
    const grew = isolateBytes() - before;
    const stopped = oneLine(error, server.url) && grew < 400 * 1024 * 1024;
    shapes.add(a.name, { stopped, recorded: oneLine(error, server.url) && leaks(error) === null });
    assert.ok(stopped, `${a.name}: ${error} (grew ${grew} bytes)`);
    assert.equal(leaks(error), null);
  });
}

/** What a server that echoes the request's credentials says, in each form. */
const ECHOES: { name: string; say: (auth: string) => string }[] = [
  {
    name: "the Authorization header in its message",
    say: (h) => JSON.stringify({ message: `bad header: ${h}` }),
  },
  {
    name: "the header as JSON in its detail",
    say: (h) => JSON.stringify({ detail: { headers: { Authorization: h } } }),
  },
  {
    name: "the header in a JSON text of its detail",
    say: (h) => JSON.stringify({ detail: `{"authorization": "${h}"}` }),
  },
  {
    name: "the bare token or password",
    say: () => JSON.stringify({ message: `unknown key ${TOKEN} ${PASSWORD}` }),
  },
  { name: "the token as its error code", say: () => JSON.stringify({ error_code: TOKEN, message: "no" }) },
  { name: "the header in plain text", say: (h) => `Forbidden\r\nreceived ${h}` },
  {
    name: "the credential upper-cased",
    say: () => JSON.stringify({ message: `KEY ${TOKEN.toUpperCase()}` }),
  },
  {
    name: "the credential URL-encoded and base64'd",
    say: () =>
      JSON.stringify({
        message: `q=${encodeURIComponent(`${USER}:${PASSWORD}`)} b=${btoa(TOKEN)} p=${btoa(PASSWORD)}`,
      }),
  },
  {
    name: "the credential in hex",
    say: () =>
      JSON.stringify({
        message: `hex ${
          Array.from(new TextEncoder().encode(PASSWORD), (b) => b.toString(16).padStart(2, "0")).join("")
        }`,
      }),
  },
  {
    name: "the credential split by invisible characters",
    say: () =>
      JSON.stringify({
        message: `k=${TOKEN.split("").join("\u200b")} p=${PASSWORD.split("").join("\u0000")}`,
      }),
  },
  {
    name: "the credential after a line of its own",
    say: (h) => JSON.stringify({ message: `\n\n   \n${h}` }),
  },
  {
    name: "the credential in a URL",
    say: () => JSON.stringify({ message: `retry at https://${USER}:${PASSWORD}@mlflow.example.com/api` }),
  },
];

for (const kind of ["bearer", "basic"] as const) {
  for (const e of ECHOES) {
    Deno.test(`mlflow attack: an error that echoes ${e.name} (${kind}) prints no credential`, async () => {
      const echo: Route = (request) => refusal(e.say(request.headers.get("authorization") ?? ""), 401);
      await using server = hostileMlflow({
        "POST /api/2.0/mlflow/runs/search": echo,
        "POST /v1/traces": echo,
      });
      const client = new MlflowClient(
        server.url,
        kind === "bearer" ? { token: TOKEN } : { username: USER, password: PASSWORD },
      );
      for (
        const call of [() => client.searchRuns("1", "x"), () => client.sendSpans(new Uint8Array(1), "1")]
      ) {
        const error = await call().then(() => null, (x: unknown) => x);
        const leaked = leaks(error, CARRIED[kind]);
        echoes.add(`${e.name} (${kind})`, { stopped: leaked === null, recorded: oneLine(error, server.url) });
        assert.equal(leaked, null, `${e.name}: ${(error as Error)?.message}`);
        assert.ok(oneLine(error, server.url), String(error));
      }
    });
  }
}

/** The bytes of a text, as UTF-8. */
const utf8 = (s: string) => [...new TextEncoder().encode(s)];

/** Forms of a credential that no list of its forms names: each undone by a reader, or a person. */
const DISGUISES: { name: string; wear: (secret: string) => string }[] = [
  { name: "spaced out", wear: (s) => s.split("").join(" ") },
  { name: "backwards", wear: (s) => [...s].reverse().join("") },
  {
    name: "in ROT13",
    wear: (s) =>
      s.replace(/[a-z]/gi, (c) => {
        const base = c <= "Z" ? 65 : 97;
        return String.fromCharCode((c.charCodeAt(0) - base + 13) % 26 + base);
      }),
  },
  {
    name: "in full-width letters",
    wear: (s) => s.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)),
  },
  { name: "as HTML entities", wear: (s) => [...s].map((c) => `&#${c.charCodeAt(0)};`).join("") },
  {
    name: "as hex HTML entities",
    wear: (s) => [...s].map((c) => `&#x${c.charCodeAt(0).toString(16)};`).join(""),
  },
  { name: "percent-encoded whole", wear: (s) => utf8(s).map((b) => `%${b.toString(16)}`).join("") },
  { name: "as \\x escapes", wear: (s) => utf8(s).map((b) => `\\x${b.toString(16)}`).join("") },
  { name: "as hex with colons", wear: (s) => utf8(s).map((b) => b.toString(16)).join(":") },
  { name: "as base64 after one byte", wear: (s) => btoa(String.fromCharCode(...utf8(`k${s}`))).slice(2) },
  { name: "as base64 after two bytes", wear: (s) => btoa(String.fromCharCode(...utf8(`k:${s}`))).slice(3) },
  {
    name: "across two lines",
    wear: (s) => `${s.slice(0, Math.ceil(s.length / 2))}\n${s.slice(Math.ceil(s.length / 2))}`,
  },
];

for (const kind of ["bearer", "basic"] as const) {
  for (const d of DISGUISES) {
    Deno.test(`mlflow attack: an error that echoes the credential ${d.name} (${kind}) prints none of it`, async () => {
      const worn = CARRIED[kind].map(d.wear);
      const echo: Route = () => refusal(JSON.stringify({ message: `rejected ${worn.join(" / ")}` }), 401);
      await using server = hostileMlflow({
        "POST /api/2.0/mlflow/runs/search": echo,
        "POST /v1/traces": echo,
      });
      const client = new MlflowClient(
        server.url,
        kind === "bearer" ? { token: TOKEN } : { username: USER, password: PASSWORD },
      );
      // Only a message's first line is shown: a credential across two lines shows its first half there.
      const pieces = worn.flatMap((w) => w.split("\n")).filter((p) => p.length >= 6);
      for (
        const call of [() => client.searchRuns("1", "x"), () => client.sendSpans(new Uint8Array(1), "1")]
      ) {
        const error = await call().then(() => null, (x: unknown) => x);
        const shown = String((error as Error)?.message).toLowerCase();
        const leaked = pieces.find((p) => shown.includes(p.toLowerCase())) ?? leaks(error, CARRIED[kind]);
        echoes.add(`the credential ${d.name} (${kind})`, {
          stopped: leaked == null,
          recorded: oneLine(error, server.url),
        });
        assert.equal(leaked ?? null, null, `${d.name}: ${(error as Error)?.message}`);
        assert.ok(oneLine(error, server.url), String(error));
      }
    });
  }
}

Deno.test("mlflow attack: the URL's own user and password never show, in a refusal or a failure to connect", async () => {
  await using server = hostileMlflow({
    "POST /api/2.0/mlflow/runs/search": (r) =>
      refusal(JSON.stringify({ message: `got ${r.url} ${r.headers.get("authorization")}` })),
  });
  const withUser = server.url.replace("http://", `http://${USER}:${PASSWORD}@`);
  const refused = await new MlflowClient(withUser).searchRuns("1", "x").then(() => null, (x: unknown) => x);
  const gone = await new MlflowClient(`http://${USER}:${PASSWORD}@127.0.0.1:9/`).searchRuns("1", "x")
    .then(() => null, (x: unknown) => x);
  for (const [name, error] of [["a refusal", refused], ["a failure to connect", gone]] as const) {
    echoes.add(`the URL's user and password in ${name}`, {
      stopped: error instanceof MlflowError && leaks(error) === null,
      recorded: error instanceof MlflowError && !error.message.includes("\n"),
    });
    assert.equal(leaks(error), null, String(error));
  }
});

Deno.test("mlflow attack: a server answering {} to GET /api/3.0/mlflow/traces/<id> fails copyRun with one line, not a TypeError", async () => {
  await using server = hostileMlflow({ "GET /api/3.0/mlflow/traces/*": () => Response.json({}) });
  await using t = await storeWithRun({ agent: `analyst-${crypto.randomUUID().slice(0, 8)}` });
  const error = await copyRun(t.store, t.runIds[0]!, mlflowPolicy("usage", server.url), {
    environ: { MLFLOW_TRACKING_URI: server.url, MLFLOW_TRACKING_TOKEN: TOKEN },
  }).then(() => null, (x: unknown) => x);
  const stopped = error instanceof ProveviError && !(error instanceof TypeError);
  shapes.add("{} where a trace is due, through copyRun", {
    stopped,
    recorded: oneLine(error, server.url) && leaks(error) === null,
  });
  assert.ok(stopped, String(error));
  assert.match(
    (error as Error).message,
    /^MLflow at http:\/\/127\.0\.0\.1:\d+ gave an answer to find the trace tr-[0-9a-f]{32} that the copy cannot use: trace is not what MLflow's API gives/,
  );
  assert.ok(
    server.calls.some((c) => c.startsWith("GET /api/3.0/mlflow/traces/tr-")),
    server.calls.join("\n"),
  );
});

Deno.test("the mlflow attack counts", () => {
  console.log(shapes.line({ stopped: "stopped", recorded: "one line naming the server, no credential" }));
  console.log(echoes.line({ stopped: "held no credential", recorded: "one line naming the server" }));
  assert.equal(shapes.missed.length, 0, shapes.line());
  assert.equal(echoes.missed.length, 0, echoes.line());
});
