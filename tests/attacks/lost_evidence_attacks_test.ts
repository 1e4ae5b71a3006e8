/**
 * A store that does not keep the run folder's evidence after its seal (provevi-reference.txt: "A store that
 * keeps no events.jsonl and manifest.json fails the run when it closes, in both modes"): it deletes, empties,
 * links or rewrites them. Each run through it, in strict and in lenient mode, must end failed with one line
 * that names the file, never completed.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { RunRecord } from "../../lib/provevi/evidence/record.ts";
import type { EvidenceStore, RunWriter, SealInfo } from "../../lib/provevi/store/store.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { RunFile } from "../../lib/provrun/run/run_file.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { answerRunText } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("lost evidence");

/** A file store whose writers do `lose` to the run folder right after each seal. */
class LosingStore implements EvidenceStore {
  readonly uri = "file";
  readonly #inner: FileStore;
  readonly #lose: (evidence: string) => Promise<void>;

  constructor(runs: string, lose: (evidence: string) => Promise<void>) {
    this.#inner = new FileStore({ runs });
    this.#lose = lose;
  }
  get runsRoot(): string {
    return this.#inner.runsRoot;
  }
  async openRun(runId: string, options?: { folder?: string }): Promise<RunWriter> {
    const writer = await this.#inner.openRun(runId, options);
    const lose = this.#lose;
    return {
      runId: writer.runId,
      folder: writer.folder,
      append: (line, event) => writer.append(line, event),
      putPayload: (bytes) => writer.putPayload(bytes),
      seal: async (info?: SealInfo) => {
        const manifest = await writer.seal(info);
        await lose(join(writer.folder, "evidence"));
        return manifest;
      },
    };
  }
  readRun(runId: string): Promise<RunRecord> {
    return this.#inner.readRun(runId);
  }
  runIds(): Promise<string[]> {
    return this.#inner.runIds();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

const LOSSES: [string, (evidence: string) => Promise<void>, RegExp][] = [
  ["events.jsonl deleted", (e) => Deno.remove(join(e, "events.jsonl")), /events\.jsonl is missing/],
  ["manifest.json deleted", (e) => Deno.remove(join(e, "manifest.json")), /manifest\.json is missing/],
  ["both deleted", (e) => Deno.remove(e, { recursive: true }), /events\.jsonl is missing/],
  ["events.jsonl emptied", (e) => Deno.writeTextFile(join(e, "events.jsonl"), ""), /holds 0 bytes/],
  [
    "events.jsonl a link to a copy",
    async (e) => {
      await Deno.rename(join(e, "events.jsonl"), join(e, "kept.jsonl"));
      await Deno.symlink(join(e, "kept.jsonl"), join(e, "events.jsonl"));
    },
    /events\.jsonl is a link/,
  ],
  ["manifest.json not JSON", (e) => Deno.writeTextFile(join(e, "manifest.json"), "{"), /is not JSON/],
  [
    "manifest.json of fewer events",
    async (e) => {
      const m = JSON.parse(await Deno.readTextFile(join(e, "manifest.json")));
      await Deno.writeTextFile(join(e, "manifest.json"), JSON.stringify({ ...m, events: 1 }));
    },
    /says events 1, but the seal made/,
  ],
  [
    "payloads/ and payloads.pack deleted",
    async (e) => {
      await Deno.remove(join(e, "payloads"), { recursive: true });
      await Deno.remove(join(e, "payloads.pack")).catch(() => {});
    },
    /payload \w+ of the manifest is missing/,
  ],
];

const RUN = (mode: string) => RunFile.parse(answerRunText({ mode }));

Deno.test("a store that does not keep events.jsonl and manifest.json after the seal fails its run, in strict and in lenient mode", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-lost-evidence-" });
  const failures: string[] = [];
  try {
    for (const mode of ["strict", "lenient"]) {
      for (const [name, lose, says] of LOSSES) {
        const what = `${name} (${mode})`;
        await using store = new LosingStore(join(dir, `${mode}-${name.replaceAll(/\W+/g, "-")}`), lose);
        const outcome = await runFile(RUN(mode), { store });
        const failed = outcome.status === "failed" && outcome.error?.name === "EvidenceError";
        const named = says.test(outcome.error?.message ?? "") &&
          /did not keep its evidence/.test(outcome.error?.message ?? "");
        if (!failed || !named) failures.push(`${what}: ${outcome.status} ${JSON.stringify(outcome.error)}`);
        tally.add(what, { stopped: failed, recorded: named });
      }
    }
    // The same store that keeps its files completes the run.
    await using kept = new LosingStore(join(dir, "kept"), () => Promise.resolve());
    assert.equal((await runFile(RUN("strict"), { store: kept })).status, "completed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  assert.deepEqual(failures, []);
});

Deno.test("the lost evidence counts", () => {
  console.log(tally.line({ stopped: "fail the run", recorded: "name the file" }));
  assert.equal(tally.missed.length, 0, tally.line());
});
