import assert from "node:assert/strict";
import { join } from "node:path";
import { NeedsIndexedStore, ProveviError } from "../../../lib/provevi/evidence/errors.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { ASSESSMENTS_FILE, checkAssessmentsFile } from "../../../lib/provevi/evidence/assessments_file.ts";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../_sample_run.ts";

async function withRun(fn: (store: FileStore, folder: string) => Promise<void>): Promise<void> {
  const runs = await Deno.makeTempDir({ prefix: "file-assess-" });
  try {
    const store = new FileStore({ runs });
    await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
    await fn(store, join(runs, SAMPLE_RUN_ID));
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
}

const codes = async (store: FileStore) =>
  (await verifyRun(await store.readRun(SAMPLE_RUN_ID))).problems.map((p) => `${p.code} ${p.line}`);

Deno.test("the file store keeps a run's assessments in its folder, chained from its seal, and the run verifies", () =>
  withRun(async (store) => {
    const a = await store.assess(SAMPLE_RUN_ID, "correct", true, { rationale: "adds up", source: "ada" });
    const b = await store.assess(`${SAMPLE_RUN_ID}#8`, "score", 0.75);
    const c = await store.assess({ run: SAMPLE_RUN_ID, span: "0000000000000006" }, "fast", "yes");
    assert.deepEqual([a.id, b.id, c.id], [1, 2, 3]);
    assert.deepEqual(
      [a.run_id, a.seq, a.span_id, a.experiment, a.value, a.rationale, a.source],
      [SAMPLE_RUN_ID, null, null, null, true, "adds up", "ada"],
    );
    assert.deepEqual([b.seq, c.span_id], [8, "0000000000000006"]);
    assert.deepEqual(await store.assessments(SAMPLE_RUN_ID), [a, b, c]);
    assert.deepEqual(await codes(store), []);
  }));

Deno.test("the file store's assessments chain when many are written at once", () =>
  withRun(async (store, folder) => {
    await Promise.all(Array.from({ length: 24 }, (_, i) => store.assess(SAMPLE_RUN_ID, `n${i}`, i)));
    const list = await store.assessments(SAMPLE_RUN_ID);
    assert.deepEqual(list.map((a) => a.id), Array.from({ length: 24 }, (_, i) => i + 1));
    assert.deepEqual(new Set(list.map((a) => a.value)).size, 24);
    assert.deepEqual(await codes(store), []);
    assert.equal((await Deno.readTextFile(join(folder, ASSESSMENTS_FILE))).split("\n").length, 25);
  }));

Deno.test("the file store refuses an assessment of an experiment, of an event or span the run lacks, or a bad value", () =>
  withRun(async (store, folder) => {
    await assert.rejects(
      () => store.assess({ experiment: "experiment://acme/risk/dev/credit/q" }, "approved", true),
      NeedsIndexedStore,
    );
    await assert.rejects(
      () => store.assess("experiment://acme/risk/dev/credit/q", "approved", true),
      NeedsIndexedStore,
    );
    await assert.rejects(() => store.assess(`${SAMPLE_RUN_ID}#99`, "x", 1), /has no event 99/);
    await assert.rejects(
      () => store.assess({ run: SAMPLE_RUN_ID, span: "ffffffffffffffff" }, "x", 1),
      /has no span ffffffffffffffff/,
    );
    await assert.rejects(() => store.assess(SAMPLE_RUN_ID, "x", Infinity), ProveviError);
    await assert.rejects(() => store.assess(SAMPLE_RUN_ID, "", 1), /needs a name/);
    await assert.rejects(() => store.assess("run-nope", "x", 1), /no run "run-nope"/);
    // Nothing was written by a refusal.
    await assert.rejects(() => Deno.lstat(join(folder, ASSESSMENTS_FILE)), Deno.errors.NotFound);
  }));

Deno.test("the file store refuses to assess a run that is not sealed: there is no seal to chain from", async () => {
  const runs = await Deno.makeTempDir({ prefix: "file-assess-" });
  try {
    const store = new FileStore({ runs });
    const writer = await store.openRun("run-open");
    const next = new EventChain("run-open").next({
      type: "run_created",
      component: "RunContext",
      actor: "ada",
      data: {},
    });
    await writer.append(next.line, next.event);
    await assert.rejects(() => store.assess("run-open", "x", 1), /is not sealed: .*assess it once it ends/);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("an assessments.jsonl that is a link is refused to write and read as unreadable, and never followed", () =>
  withRun(async (store, folder) => {
    const elsewhere = join(folder, "..", "elsewhere.jsonl");
    await Deno.writeTextFile(elsewhere, "");
    await Deno.symlink(elsewhere, join(folder, ASSESSMENTS_FILE));
    await assert.rejects(() => store.assess(SAMPLE_RUN_ID, "x", 1), /is a link or not a plain file/);
    assert.equal(await Deno.readTextFile(elsewhere), "");
    assert.deepEqual(await codes(store), ["assessments.unreadable null"]);
    assert.deepEqual(await store.assessments(SAMPLE_RUN_ID), []);
  }));

Deno.test("checkAssessmentsFile() reads a file cut mid-line as one problem, and a writer after the cut chains on", () =>
  withRun(async (store, folder) => {
    await store.assess(SAMPLE_RUN_ID, "a", 1);
    await Deno.writeTextFile(join(folder, ASSESSMENTS_FILE), '{"cut', { append: true });
    assert.deepEqual(await codes(store), ["assessments.line 2"]);
    await store.assess(SAMPLE_RUN_ID, "b", 2);
    // The cut line is kept and named; the line after it chains from it, so nothing else is reported.
    assert.deepEqual(await codes(store), ["assessments.line 2"]);
    const { assessments } = await checkAssessmentsFile(folder, {
      runId: SAMPLE_RUN_ID,
      lastHash: null,
      seqs: new Set(),
      spans: new Set(),
    });
    assert.deepEqual(assessments.map((a) => a.name), ["a", "b"]);
  }));
