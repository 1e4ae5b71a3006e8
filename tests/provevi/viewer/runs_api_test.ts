import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { viewerHandler } from "../../../lib/provevi/viewer/viewer_server.ts";
import { DigestCache, RACY_MS } from "../../../lib/provevi/viewer/digest_cache.ts";
import type { RunView } from "../../../lib/provevi/viewer/run_view.ts";
import type { RunsAnswer } from "../../../lib/provevi/viewer/run_search.ts";
import type { ListDigest } from "../../../lib/provevi/viewer/runs_api.ts";
import type { CompareView } from "../../../lib/provevi/viewer/compare_steps.ts";
import type { EventChat } from "../../../lib/provevi/viewer/run_chat.ts";
import { tour } from "../../../cli/tour.ts";
import {
  agentRunFile,
  agentV2RunFile,
  demoCatalog,
  demoRun,
  failingRunFile,
  tamperedRun,
} from "./_demo_runs.ts";

const PORT = 5124;
const TOKEN = "c".repeat(64);
const quiet = { out: () => {}, err: () => {}, terminal: false, progress: () => {} };
const policy = (level: string | null) =>
  level === null ? TelemetryPolicy.denyAll() : TelemetryPolicy.parse(
    `version: 1\ndestinations:\n  browser:\n    kind: live\n    receives: ${level}\n`,
  );

/** The demo's runs, made once for the file's tests. */
const demo = (async () => {
  const t = await demoCatalog();
  await tour(quiet, { runs: t.runs });
  const ids = {
    agent: await demoRun(t, agentRunFile()),
    agent2: await demoRun(t, agentV2RunFile()),
    failed: await demoRun(t, failingRunFile()),
    tampered: await tamperedRun(t.runs),
    tour: "",
  };
  ids.tour = [...Deno.readDirSync(t.runs)].map((e) => e.name).find((n) =>
    !n.startsWith(".") && !Object.values(ids).includes(n)
  )!;
  return { t, ids };
})();

async function viewer(level: string | null) {
  const { t, ids } = await demo;
  const handle = viewerHandler(new FileStore({ runs: t.runs }), {
    policy: policy(level),
    port: PORT,
    token: TOKEN,
  });
  const get = async <T>(path: string, status = 200): Promise<T> => {
    const r = await handle(
      new Request(`http://127.0.0.1:${PORT}/t/${TOKEN}/${path}`, { headers: { host: `127.0.0.1:${PORT}` } }),
    );
    const body = await r.text();
    assert.equal(r.status, status, `${path}: ${body.slice(0, 300)}`);
    return JSON.parse(body) as T;
  };
  return { get, ids, t, close: () => handle.close() };
}

const test = (name: string, fn: () => Promise<void>) =>
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false, fn });

test("the runs page's digests give each run's verdict, calls and errors, from the check of the whole run", async () => {
  const v = await viewer("bodies");
  try {
    const { ids } = v;
    const all = Object.values(ids).map((id) => "run=" + id).join("&");
    const digests = new Map((await v.get<ListDigest[]>("api/digests?" + all)).map((d) => [d.run_id, d]));
    const d = (id: string) => digests.get(id) as Exclude<ListDigest, { error: string }>;
    assert.equal(d(ids.agent).verdict, "verified");
    assert.deepEqual([d(ids.agent).model_calls, d(ids.agent).tool_calls, d(ids.agent).errors], [4, 3, 1]);
    assert.deepEqual(d(ids.agent).tokens, { input: 2199, output: 145 });
    assert.equal(d(ids.failed).verdict, "verified", "a failed run's evidence verifies");
    assert.equal(d(ids.failed).errors, 2);
    assert.equal(d(ids.tour).verdict, "cannot_check", "no catalog to compare its bundle with");
    assert.equal(d(ids.tampered).verdict, "does_not_verify");
    await v.get(
      "api/digests?" +
        Array.from({ length: 51 }, (_, i) => `run=run-20261201T000000Z-${String(i).padStart(8, "0")}`).join(
          "&",
        ),
      400,
    );
    await v.get("api/digests?run=../etc", 404);
  } finally {
    await v.close();
  }
});

test("a digest is checked again as soon as its run changes on disk", async () => {
  const v = await viewer("bodies");
  const runs = await Deno.makeTempDir();
  try {
    const { t, ids } = v;
    await Deno.mkdir(runs, { recursive: true });
    const { cp } = await import("node:fs/promises");
    await cp(join(t.runs, ids.agent), join(runs, ids.agent), { recursive: true });
    const handle = viewerHandler(new FileStore({ runs }), {
      policy: policy("bodies"),
      port: PORT,
      token: TOKEN,
    });
    const ask = async () =>
      ((await (await handle(
        new Request(`http://127.0.0.1:${PORT}/t/${TOKEN}/api/digests?run=${ids.agent}`, {
          headers: { host: `127.0.0.1:${PORT}` },
        }),
      )).json()) as { verdict: string }[])[0]!.verdict;
    assert.equal(await ask(), "verified");
    // The run is of format 2: a byte of a payload in payloads.pack changed.
    const pack = join(runs, ids.agent, "evidence", "payloads.pack");
    const bytes = await Deno.readFile(pack);
    bytes[bytes.length - 2] = bytes[bytes.length - 2]! ^ 0x01;
    await Deno.writeFile(pack, bytes);
    assert.equal(await ask(), "does_not_verify");
    await handle.close();
  } finally {
    await Deno.remove(runs, { recursive: true });
    await v.close();
  }
});

test("a search finds runs by their prompt, answers and tool arguments at bodies, and only by names below", async () => {
  const bodies = await viewer("bodies");
  try {
    const { ids } = bodies;
    const found = async (query: string) =>
      (await bodies.get<RunsAnswer>("api/runs?" + query)).runs.map((r) => r.run_id).sort();
    assert.deepEqual(await found("q=north+region"), [ids.agent].sort(), "an answer's words");
    assert.deepEqual(await found("q=revenue-2025"), [ids.agent], "a tool's arguments");
    assert.ok((await found("q=revenue+growth")).includes(ids.failed), "a prompt's words");
    assert.deepEqual(await found("verdict=does_not_verify"), [ids.tampered]);
    assert.deepEqual(await found("verdict=cannot_check"), [ids.tour]);
    assert.deepEqual(await found("tool=write_file"), [ids.agent, ids.agent2].sort());
    assert.deepEqual(await found("q=revenue&status=failed"), [ids.failed]);
    assert.ok(
      !(await found("q=Revenue")).includes(ids.tampered),
      "the content of a run that does not verify",
    );
    const answer = await bodies.get<RunsAnswer>("api/runs?q=revenue");
    assert.deepEqual([answer.search?.indexed, answer.search?.total], [5, 5]);
    for (
      const bad of [
        "verdict=tampered",
        "min_cost=abc",
        "until=yesterday",
        "q=" + "x".repeat(501),
        "status=gone",
      ]
    ) {
      await bodies.get("api/runs?" + bad, 400);
    }
  } finally {
    await bodies.close();
  }
  const names = await viewer("names");
  try {
    const { ids } = names;
    const found = async (query: string) =>
      (await names.get<RunsAnswer>("api/runs?" + query)).runs.map((r) => r.run_id);
    assert.deepEqual(await found("q=north+region"), [], "no free text below bodies");
    assert.deepEqual(
      (await found("q=revenue-analyst")).sort(),
      [ids.agent, ids.agent2].sort(),
      "an agent's name",
    );
    const page = await names.get<RunsAnswer>("api/runs");
    assert.deepEqual(page.hidden, ["tokens", "cost"]);
  } finally {
    await names.close();
  }
  const structure = await viewer(null);
  try {
    const page = await structure.get<RunsAnswer>("api/runs");
    assert.ok(page.hidden.includes("agent") && page.hidden.includes("model"));
    assert.ok(page.runs.every((r) => r.agent === null));
    assert.deepEqual((await structure.get<RunsAnswer>("api/runs?agent=revenue-analyst&q=revenue")).runs, []);
  } finally {
    await structure.close();
  }
});

test("a run page says why a run failed, and shows a run it cannot check with its content", async () => {
  const v = await viewer("bodies");
  try {
    const failed = await v.get<RunView>(`api/runs/${v.ids.failed}`);
    assert.equal(failed.verdict.kind, "verified");
    assert.equal(failed.failure?.error, "AI_APICallError");
    assert.match(failed.failure?.message ?? "", /overloaded/);
    const tour = await v.get<RunView>(`api/runs/${v.ids.tour}`);
    assert.equal(tour.verdict.kind, "cannot_check");
    assert.deepEqual(tour.verdict.problems.map((p) => p.code), ["catalog.missing"]);
    assert.equal(tour.untrusted, false);
    assert.ok(tour.events.some((e) => e.answer?.includes("Revenue grew")), "its content shows");
    const agent = await v.get<RunView>(`api/runs/${v.ids.agent}`);
    assert.equal(agent.facts.agent, "acme/finance/dev/revenue-analyst");
    assert.deepEqual(agent.errors.map((e) => e.kind), ["tool_error"]);
    const call = agent.calls.find((c) => c.kind === "model")!;
    const chat = await v.get<EventChat>(`api/runs/${v.ids.agent}/events/${call.seq}/chat`);
    assert.deepEqual(chat.messages.map((m) => m.role), ["system", "user", "assistant"]);
    const history = await v.get<EventChat>(`api/runs/${v.ids.agent}/events/${agent.conversation_seq}/chat`);
    assert.ok(history.messages.some((m) => m.parts.some((p) => p.type === "tool_result" && p.error)));
    await v.get(`api/runs/${v.ids.agent}/events/0/chat`, 404);
    const tampered = await v.get<RunView>(`api/runs/${v.ids.tampered}`);
    await v.get(`api/runs/${v.ids.tampered}/events/${tampered.calls[0]!.seq}/chat`, 403);
  } finally {
    await v.close();
  }
  const names = await viewer("names");
  try {
    const agent = await names.get<RunView>(`api/runs/${names.ids.agent}`);
    await names.get(`api/runs/${names.ids.agent}/events/${agent.calls[0]!.seq}/chat`, 403);
    assert.equal(agent.conversation_seq, null);
  } finally {
    await names.close();
  }
});

test("compare pairs two runs' steps, marks the first divergence, and diffs their agents' specs at bodies", async () => {
  const v = await viewer("bodies");
  try {
    const { ids } = v;
    const same = await v.get<CompareView>(`api/compare?a=${ids.agent}&b=${ids.agent}`);
    assert.equal(same.steps.first, null);
    assert.ok(same.spec!.every((r) => !r.differs));
    const view = await v.get<CompareView>(`api/compare?a=${ids.agent}&b=${ids.agent2}`);
    assert.equal(view.steps.first, 1, "the instructions differ, so the first request does");
    assert.ok(view.steps.pairs.some((p) => p.differs.includes("missing")));
    assert.ok(view.spec!.some((r) => r.path === "instructions" && r.differs));
    assert.equal(view.sides[0]!.errors, 1);
  } finally {
    await v.close();
  }
  const names = await viewer("names");
  try {
    const view = await names.get<CompareView>(`api/compare?a=${names.ids.agent}&b=${names.ids.agent2}`);
    assert.equal(view.spec, null, "a spec holds free text: bodies only");
    assert.equal(view.steps.first, 1, "hashes compare at any level");
    await names.get("api/totals", 400);
  } finally {
    await names.close();
  }
});

test("a run unchanged for RACY_MS keeps its digest until it changes; one changed more recently is checked each time", async () => {
  const { t, ids } = await demo;
  const runs = await Deno.makeTempDir();
  try {
    const { cp } = await import("node:fs/promises");
    await cp(join(t.runs, ids.agent), join(runs, ids.agent), { recursive: true });
    const store = new FileStore({ runs });
    let checks = 0;
    const counted = Object.assign(Object.create(store) as FileStore, {
      readRun: async (runId: string) => {
        const record = await store.readRun(runId);
        const manifestText = record.manifestText.bind(record);
        return Object.assign(record, { manifestText: () => (checks++, manifestText()) });
      },
    });
    const cache = new DigestCache(counted, { policy: policy("bodies") });
    // copied just now: within a tick of the file system's clock, so nothing is kept
    assert.equal((await cache.digest(ids.agent)).verdict, "verified");
    const once = checks; // the reads of its manifest a check makes
    assert.ok(once > 0);
    assert.equal((await cache.digest(ids.agent)).verdict, "verified");
    assert.equal(checks, 2 * once);
    await new Promise((resolve) => setTimeout(resolve, RACY_MS + 100));
    assert.equal((await cache.digest(ids.agent)).verdict, "verified");
    assert.equal((await cache.digest(ids.agent)).verdict, "verified");
    assert.equal(checks, 3 * once, "kept once its files are older than RACY_MS");
    const pack = join(runs, ids.agent, "evidence", "payloads.pack");
    const bytes = await Deno.readFile(pack);
    bytes[bytes.length - 2] = bytes[bytes.length - 2]! ^ 0x01;
    await Deno.writeFile(pack, bytes);
    assert.equal((await cache.digest(ids.agent)).verdict, "does_not_verify");
    assert.equal(checks, 4 * once);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

test("closing the demo", async () => {
  const { t } = await demo;
  await t[Symbol.asyncDispose]();
});
