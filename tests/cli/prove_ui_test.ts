import assert from "node:assert/strict";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { openStore } from "../../lib/provevi/runs/open_store.ts";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/policy.ts";
import { viewerHandler } from "../../lib/provevi/viewer/viewer_server.ts";

const RUNS = new URL("../../fixtures/runs", import.meta.url).pathname;

Deno.test("prove ui refuses a port that is not a port, with exit 2 and one line", async () => {
  const io = bufferIo();
  assert.equal(await prove(["--runs", RUNS, "ui", "--port", "http"], io), 2);
  assert.match(
    io.stderr.join("\n"),
    /^prove: --port http is not a port: give a whole number from 0 to 65535$/m,
  );
});

Deno.test("prove ui says so when its port is taken, with exit 1 and one line", async () => {
  const other = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const io = bufferIo();
    const port = (other.addr as Deno.NetAddr).port;
    assert.equal(await prove(["--runs", RUNS, "ui", "--port", String(port)], io), 1);
    assert.equal(
      io.stderr.join("\n"),
      `prove: port ${port} on 127.0.0.1 is taken: choose another with --port N`,
    );
  } finally {
    other.close();
  }
});

Deno.test("prove ui refuses a policy file that cannot be read, before it listens", async () => {
  const io = bufferIo();
  assert.equal(
    await prove(["--runs", RUNS, "ui", "--port", "0", "--policy", "/nonexistent/policy.yaml"], io),
    1,
  );
  assert.match(io.stderr.join("\n"), /^prove: .*\/nonexistent\/policy\.yaml/);
});

Deno.test("the viewer's /api/info says assessments can be added on a sqlite store and on a file store (in the run's folder)", async () => {
  const dir = await Deno.makeTempDir();
  const db = `sqlite:///${dir}/evidence.db`;
  await (await openStore(db, { runs: `${dir}/runs` })).close(); // make it
  const port = 5124;
  const token = "b".repeat(64);
  const info = async (uri: string, runs: string) => {
    const store = await openStore(uri, { runs, readOnly: true });
    try {
      const handle = viewerHandler(store, {
        policy: TelemetryPolicy.denyAll(),
        port,
        token,
        openToWrite: () => openStore(uri, { runs }),
      });
      const r = await handle(
        new Request(`http://127.0.0.1:${port}/t/${token}/api/info`, {
          headers: { host: `127.0.0.1:${port}` },
        }),
      );
      return await r.json();
    } finally {
      await store.close();
    }
  };
  assert.equal((await info("file", RUNS)).assess, true);
  assert.equal((await info(db, `${dir}/runs`)).assess, true);
  await Deno.remove(dir, { recursive: true });
});
