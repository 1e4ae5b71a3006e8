/**
 * Attacks on the run's writer through what answers at the span daemon's address: the writer finds `prove serve`
 * through a file and read its answers whole and waited on them for ever (`response.json()`), so whatever held the
 * port (a daemon gone, another program in its place) could hold the writer's memory or its seal. The writer now
 * reads each answer within a cap and a time limit, takes an opened run only with addresses of the daemon's own,
 * and a seal the daemon does not answer well is the run's `telemetry_problem`: the run seals and verifies.
 * @module
 */
import assert from "node:assert/strict";
import { openWithDaemon } from "../../lib/provevi/receiver/daemon_client.ts";
import { findRun, verifyRun } from "../../lib/provevi/runs/mod.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { openInStore, tempStore } from "../provevi/receiver/_daemon.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("daemon answer attacks");
const RUN = "run-20261203T000000Z-0000da0e";

/** An endless body of JSON-looking bytes. */
function endless(): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode('{"x":"' + "a".repeat(64 * 1024));
  return new ReadableStream({ pull: (c) => c.enqueue(chunk) });
}

/** A body that never comes. */
function stalled(): ReadableStream<Uint8Array> {
  return new ReadableStream({ pull: () => new Promise(() => {}) });
}

/** A stand-in at the daemon's address: `open` answers POST /runs, `seal` the seal. */
function standIn(answers: { open: (base: string) => Response; seal?: () => Response }) {
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
  }, (request): Response => {
    const base: string = `http://127.0.0.1:${server.addr.port}`;
    if (new URL(request.url).pathname === "/runs") return answers.open(base);
    return answers.seal?.() ?? new Response("no", { status: 404 });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

const openedAt = (base: string, seal = `${base}/runs/h/seal`) =>
  Response.json({
    run_id: RUN,
    endpoint: `${base}/runs/h`,
    traces_url: `${base}/runs/h/v1/traces`,
    seal_url: seal,
    ingest_key: "i",
    writer_key: "w",
  }, { status: 201 });

const OPENS: Record<string, { open: (base: string) => Response; said: RegExp }> = {
  "an endless answer to the opening": {
    open: () => new Response(endless(), { status: 201 }),
    said: /opened run .* with an answer that cannot be read: its answer passed 65536 bytes$/,
  },
  "an answer to the opening that never comes": {
    open: () => new Response(stalled(), { status: 201 }),
    said: /opened run .* with an answer that cannot be read: .*(timed out|abort)/i,
  },
  "an endless error": {
    open: () => new Response(endless(), { status: 500 }),
    said: /did not open run .*: HTTP 500$/,
  },
  "a seal address elsewhere": {
    open: (base) => openedAt(base, "http://198.51.100.7/steal"),
    said: /with an answer that cannot be read: its answer is not a run's addresses at the daemon and keys$/,
  },
};

for (const [shape, { open, said }] of Object.entries(OPENS)) {
  Deno.test(`a writer whose daemon's address gives ${shape} refuses the opening in one line`, async () => {
    await using t = await tempStore();
    const stand = standIn({ open });
    try {
      const { writer, recorder } = await openInStore(t.store, RUN);
      const error = await openWithDaemon(
        { url: stand.url, secret: "s", pid: 0 },
        recorder,
        { answerMs: 1000 },
      ).then(() => null, (e: Error) => e.message);
      tally.add(shape, {
        stopped: error !== null,
        recorded: said.test(error ?? "") && !error!.includes("\n"),
      });
      assert.match(error ?? "", said);
      assert.ok(!error!.includes("\n"));
      await recorder.seal();
      assert.equal((await verifyRun(await findRun(writer.folder))).ok, true);
    } finally {
      await stand.close();
    }
  });
}

const SEALS: Record<string, () => Response> = {
  "an endless seal answer": () => new Response(endless(), { status: 200 }),
  "a seal answer that never comes": () => new Response(stalled(), { status: 200 }),
};

for (const [shape, seal] of Object.entries(SEALS)) {
  Deno.test(`a writer whose daemon gives ${shape} writes a telemetry_problem, and the run seals and verifies`, async () => {
    await using t = await tempStore();
    const stand = standIn({ open: (base) => openedAt(base), seal });
    try {
      const { writer, recorder } = await openInStore(t.store, RUN);
      const spans = await openWithDaemon(
        { url: stand.url, secret: "s", pid: 0 },
        recorder,
        { answerMs: 1000 },
      );
      await spans.close();
      await recorder.seal();
      const record = await findRun(writer.folder);
      const problems = readEventsText((await record.eventsText())!).events
        .filter((e) => e.type === "telemetry_problem").map((e) =>
          String(e.data.message ?? e.data.problem ?? "")
        );
      const ok = (await verifyRun(record)).ok;
      tally.add(shape, {
        stopped: ok,
        recorded: problems.some((p) => /did not hand back the run's spans/.test(p)),
      });
      assert.ok(problems.some((p) => /did not hand back the run's spans/.test(p)), JSON.stringify(problems));
      assert.equal(ok, true);
    } finally {
      await stand.close();
    }
  });
}

Deno.test("daemon answer attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
