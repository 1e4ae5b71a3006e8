/**
 * The contract every {@linkcode EvidenceStore} passes: the file store, the sqlite store, the postgres store.
 * A store's test calls {@linkcode storeContract} with a function that opens a fresh store.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import { sha256Hex, utf8 } from "../../../lib/provevi/evidence/hash.ts";
import { readSpansFile, SPANS_FILE, type StoredSpan } from "../../../lib/provevi/evidence/spans_file.ts";
import { verify } from "../../../lib/provevi/evidence/verify.ts";
import type { EvidenceStore } from "../../../lib/provevi/store/store.ts";
import { ProveviError, RunNotFound } from "../../../lib/provevi/evidence/errors.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../_sample_run.ts";
import { type PeerName, peerTest } from "../../_peers.ts";

/** A fresh store in a temporary runs root. */
export interface StoreUnderTest {
  store: EvidenceStore;
  runs: string;
  /** Removes what the store keeps outside the runs root (a postgres store's database). */
  cleanup?: () => Promise<void>;
}

/**
 * Registers the contract's tests for one store.
 *
 * @param name The store's name in the test names.
 * @param open Opens a fresh, empty store under a new runs root.
 */
export function storeContract(
  name: string,
  open: () => Promise<StoreUnderTest>,
  options: { peer?: PeerName } = {},
): void {
  const test = (what: string, fn: (t: StoreUnderTest) => Promise<void>) =>
    peerTest(options.peer ?? null, {
      name: `${name}: ${what}`,
      fn: async () => {
        const t = await open();
        try {
          await fn(t);
        } finally {
          await t.store.close();
          await t.cleanup?.();
          await Deno.remove(t.runs, { recursive: true }).catch(() => {});
        }
      },
    });

  test("a written run reads back line for line and verifies", async ({ store, runs }) => {
    const writer = await store.openRun(SAMPLE_RUN_ID);
    assert.equal(writer.folder, join(runs, SAMPLE_RUN_ID));
    const manifest = await writeSampleRun(writer);
    const record = await store.readRun(SAMPLE_RUN_ID);
    const text = await record.eventsText();
    assert.ok(text);
    const lines = text.trimEnd().split("\n");
    assert.equal(lines.length, manifest.events);
    assert.equal(sha256Hex(lines.at(-1)!), manifest.last_hash);
    assert.equal(manifest.status, "completed");
    assert.deepEqual(await verify(record), { ok: true, problems: [] });
    const check = await verifyRun(record, { store });
    assert.deepEqual(check.problems, []);
  });

  test("the run folder holds events.jsonl, payloads/ and manifest.json", async ({ store, runs }) => {
    await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
    for (const path of ["events.jsonl", "manifest.json", "payloads"]) {
      await Deno.stat(join(runs, SAMPLE_RUN_ID, "evidence", path));
    }
  });

  test("a payload is stored once under its SHA-256 and read back with its hash checked", async ({ store }) => {
    const writer = await store.openRun("run-payloads");
    const bytes = utf8("a payload");
    const first = await writer.putPayload(bytes);
    const second = await writer.putPayload(bytes);
    assert.equal(first, sha256Hex(bytes));
    assert.equal(second, first);
    const manifest = await writer.seal();
    assert.deepEqual(manifest.payloads, [{ sha256: first, size: bytes.length }]);
    const record = await store.readRun("run-payloads");
    assert.deepEqual(await record.payload(first), bytes);
    await Deno.writeTextFile(join(writer.folder, "evidence", "payloads", first), "changed");
    await assert.rejects(() => record.payload(first), ProveviError);
  });

  test("a run ID is used once", async ({ store }) => {
    const writer = await store.openRun("run-once");
    await writer.seal();
    await assert.rejects(() => store.openRun("run-once"), /exists already/);
  });

  test("a sealed run takes no more events or payloads", async ({ store }) => {
    const writer = await store.openRun("run-sealed");
    const chain = new EventChain("run-sealed");
    const next = chain.next({ type: "run_created", component: "RunContext", actor: "me" });
    await writer.append(next.line, next.event);
    await writer.seal();
    await assert.rejects(() => writer.append(next.line, next.event), /sealed/);
    await assert.rejects(() => writer.putPayload(utf8("x")), /sealed/);
  });

  test("a run sealed without its ending event is incomplete", async ({ store }) => {
    const writer = await store.openRun("run-cut");
    const chain = new EventChain("run-cut");
    const next = chain.next({ type: "run_created", component: "RunContext", actor: "me" });
    await writer.append(next.line, next.event);
    chain.accept(next);
    const manifest = await writer.seal({
      lost: [{ type: "model_called", time: next.event.time, error: "disk full" }],
    });
    assert.equal(manifest.status, "incomplete");
    assert.equal(manifest.lost.length, 1);
    assert.ok((await verify(await store.readRun("run-cut"))).ok);
  });

  test("runIds lists the runs oldest first", async ({ store }) => {
    for (const id of ["run-20261129T120002Z-00000002", "run-20261129T120001Z-00000001"]) {
      await (await store.openRun(id)).seal();
    }
    assert.deepEqual(await store.runIds(), [
      "run-20261129T120001Z-00000001",
      "run-20261129T120002Z-00000002",
    ]);
  });

  test("spans added before and after the seal are lines of spans.jsonl in order; the seal lets go of the file", async ({ store }) => {
    const writer = await store.openRun("run-spans");
    const path = join(writer.folder, SPANS_FILE);
    await store.addSpans!("run-spans", [storedSpan(1), storedSpan(2)]);
    await store.addSpans!("run-spans", []);
    await store.addSpans!("run-spans", [storedSpan(3)]);
    assert.equal(await openCount(path), 1, "the open run keeps spans.jsonl open");
    await writer.seal();
    assert.equal(await openCount(path), 0, "the seal closes spans.jsonl");
    await store.addSpans!("run-spans", [storedSpan(4)]);
    assert.equal(await openCount(path), 0, "a span after the seal is written without keeping the file");
    const text = await Deno.readTextFile(path);
    assert.equal(text, [1, 2, 3, 4].map((n) => JSON.stringify(storedSpan(n)) + "\n").join(""));
    assert.deepEqual((await readSpansFile(writer.folder)).map((s) => s.name), ["s1", "s2", "s3", "s4"]);
  });

  test("reading a run that does not exist throws RunNotFound", async ({ store }) => {
    await assert.rejects(() => store.readRun("run-missing"), RunNotFound);
  });

  test("a run ID that is a path is refused", async ({ store }) => {
    await assert.rejects(() => store.openRun("../escape"), TypeError);
  });
}

/** A span row, numbered. */
function storedSpan(n: number): StoredSpan {
  return {
    trace_id: "ab".repeat(16),
    span_id: n.toString(16).padStart(16, "0"),
    parent_span_id: null,
    name: `s${n}`,
    kind: 0,
    scope: { name: "test", version: null },
    start_time: "2026-11-30T12:00:00.000000Z",
    end_time: "2026-11-30T12:00:01.000000Z",
    status: { code: 0, message: null },
    attributes: { "gen_ai.tool.name": "é" },
    events: [],
    links: [],
  };
}

/**
 * How many of this process's file descriptors are open on a path (Linux: /proc/PID/fd, listed by `ls`, since
 * Deno refuses to read /proc/self/fd without --allow-all and the test task runs with its permission set).
 */
async function openCount(path: string): Promise<number> {
  const listed = await new Deno.Command("ls", { args: ["-l", `/proc/${Deno.pid}/fd`], stdout: "piped" })
    .output();
  return new TextDecoder().decode(listed.stdout).split("\n").filter((line) => line.endsWith(` -> ${path}`))
    .length;
}
