/**
 * `prove ui`'s data from a postgres store, against the real server of `.ci/peers/postgres.sh`: the info, the
 * runs page, a run's page with its verdict and answer, the agents page, and an assessment added through the
 * viewer and read back from the rows.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../../cli/_io.ts";
import { provr } from "../../../cli/provr.ts";
import { PostgresStore } from "../../../lib/provevi/postgres/postgres_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import type { RunView } from "../../../lib/provevi/viewer/run_view.ts";
import { viewerHandler } from "../../../lib/provevi/viewer/viewer_server.ts";
import { freshDatabase } from "./_pg.ts";
import { peerTest } from "../../_peers.ts";

const PORT = 5124;
const TOKEN = "c".repeat(64);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const BASE = `${ORIGIN}/t/${TOKEN}`;
const HEADERS = { host: `127.0.0.1:${PORT}` };

peerTest("postgres", {
  name:
    "prove ui's data from a postgres store: runs, a run with its verdict and answer, agents, an assessment",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "provevi-pg-ui-" });
    const db = await freshDatabase();
    try {
      const runs = join(dir, "runs");
      await Deno.writeTextFile(
        join(dir, "run.yaml"),
        `run: { org: acme, domain: demo, env: dev, actor: ada }\nagent:\n  name: q\n  backend: call\n  model: "test:"\n` +
          `  script: { turns: [{ text: "forty-two" }] }\nprompt: What is the answer?\n`,
      );
      const io = bufferIo();
      assert.equal(await provr(["--store", db.uri, "--runs", runs, "run", join(dir, "run.yaml")], io), 0);
      const id = io.stdout.at(-1)!;
      await using store = await PostgresStore.open(db.uri, { runs, create: false });
      const handle = viewerHandler(store, {
        policy: TelemetryPolicy.parse(
          `version: 1\ndestinations:\n  browser:\n    kind: live\n    receives: bodies\n`,
        ),
        port: PORT,
        token: TOKEN,
        openToWrite: () => PostgresStore.open(db.uri, { runs }),
      });
      const get = async (path: string) => {
        const r = await handle(new Request(`${BASE}${path}`, { headers: HEADERS }));
        assert.equal(r.status, 200, path);
        return await r.json();
      };
      const info = await get("/api/info");
      assert.equal(info.store, db.uri);
      assert.equal(info.assess, true);
      const page = await get("/api/runs?limit=10");
      assert.equal(page.total, 1);
      assert.equal(page.runs[0].run_id, id);
      assert.equal(page.runs[0].status, "completed");
      assert.equal(page.runs[0].agent, "acme/demo/dev/q");
      const view: RunView = await get(`/api/runs/${id}`);
      assert.equal(view.verdict.ok, true, JSON.stringify(view.verdict));
      assert.equal(view.events.find((e) => e.type === "model_called")!.answer, "forty-two");
      const agents = await get("/api/agents");
      assert.deepEqual(agents.map((a: { agent: string }) => a.agent), ["acme/demo/dev/q"]);
      const posted = await handle(
        new Request(`${BASE}/api/runs/${id}/assessments`, {
          method: "POST",
          headers: { ...HEADERS, origin: ORIGIN, "content-type": "application/json" },
          body: JSON.stringify({ name: "correct", value: true }),
        }),
      );
      assert.equal(posted.status, 201, await posted.clone().text());
      const kept = await store.assessments(id);
      assert.deepEqual(kept.map((a) => [a.name, a.value]), [["correct", true]]);
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
