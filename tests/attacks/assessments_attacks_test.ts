/**
 * Forgeries of the file store's assessments (`assessments.jsonl`, hash-chained from the run's seal): a changed,
 * removed, inserted or reordered judgement, one moved from another run or kept for a run whose evidence was
 * written again, a link, a line that is not an assessment. Each must make `prove verify` fail with a problem of
 * check 11 that names the file (stopped), and the line where there is one (recorded). What the chain cannot
 * show (the last lines cut off, or the file written again whole from the manifest's last hash) is said in
 * docs/evidence-format.md, "Assessments".
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import canonicalize from "canonicalize";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../provevi/_sample_run.ts";
import { rechain } from "../provevi/_tamper.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("assessment forgeries");

/** A sealed run of the file store with three assessments; gives the store, the folder and the file's lines. */
async function judgedRun(dir: string, runId = SAMPLE_RUN_ID) {
  const store = new FileStore({ runs: dir });
  await writeSampleRun(await store.openRun(runId));
  await store.assess(runId, "correct", false, { source: "ada" });
  await store.assess(`${runId}#8`, "score", 0.2);
  await store.assess({ run: runId, span: "0000000000000006" }, "fast", "no");
  const folder = join(dir, runId);
  const file = join(folder, "assessments.jsonl");
  return { store, folder, file, lines: (await Deno.readTextFile(file)).trimEnd().split("\n") };
}

const write = (file: string, lines: string[]) => Deno.writeTextFile(file, lines.join("\n") + "\n");
const edit = (line: string, change: (a: Record<string, unknown>) => void) => {
  const a = JSON.parse(line);
  change(a);
  return canonicalize(a)!;
};

/** Each forgery: what it does to the run (its folder, file and lines, and a second run's). */
const FORGERIES: [
  string,
  (f: { folder: string; file: string; lines: string[]; other: string[] }) => Promise<void>,
][] = [
  [
    "a judgement's value changed (false to true)",
    (f) => write(f.file, [edit(f.lines[0]!, (a) => (a.value = true)), ...f.lines.slice(1)]),
  ],
  [
    "a judgement's author changed",
    (f) => write(f.file, [f.lines[0]!, edit(f.lines[1]!, (a) => (a.source = "the board")), f.lines[2]!]),
  ],
  ["the first judgement removed", (f) => write(f.file, f.lines.slice(1))],
  ["a middle judgement removed", (f) => write(f.file, [f.lines[0]!, f.lines[2]!])],
  ["a judgement inserted, chained from the line before it", (f) => {
    const forged = edit(f.lines[0]!, (a) => {
      a.id = 2;
      a.name = "approved";
      a.value = true;
      a.prev = sha256Hex(f.lines[0]!);
    });
    return write(f.file, [f.lines[0]!, forged, ...f.lines.slice(1)]);
  }],
  ["two judgements swapped", (f) => write(f.file, [f.lines[1]!, f.lines[0]!, f.lines[2]!])],
  [
    "another run's judgements moved in, their run ID made this run's",
    (f) => write(f.file, f.other.map((l) => edit(l, (a) => (a.run_id = SAMPLE_RUN_ID)))),
  ],
  ["the judgements kept for the run's evidence written again and sealed again", async (f) => {
    await rechain(f.folder, (events) => {
      (events[8]!.data as Record<string, unknown>).output_tokens = 1;
      return events;
    });
  }],
  [
    "a judgement of an event the run does not have",
    (f) =>
      write(f.file, [f.lines[0]!, f.lines[1]!, edit(f.lines[2]!, (a) => ((a.span_id = null), (a.seq = 99)))]),
  ],
  [
    "a judgement with a field of its own",
    (f) => write(f.file, [edit(f.lines[0]!, (a) => (a.approved_by = "the board")), ...f.lines.slice(1)]),
  ],
  [
    "a judgement written with spaces (not RFC 8785)",
    (f) => write(f.file, [f.lines[0]!.replaceAll('":', '": '), ...f.lines.slice(1)]),
  ],
  ["the file made a link to another run's", async (f) => {
    await Deno.remove(f.file);
    await Deno.symlink(join(f.folder, "..", "other", "assessments.jsonl"), f.file);
  }],
];

Deno.test("every forgery of a file store's assessments makes the run fail to verify, naming the file and line", async () => {
  for (const [name, forge] of FORGERIES) {
    const dir = await Deno.makeTempDir({ prefix: "attack-assessments-" });
    try {
      const run = await judgedRun(dir);
      const other = await judgedRun(join(dir, "otherroot"), "run-20261129T120000Z-0badc0df");
      await Deno.symlink(other.folder, join(dir, "other"));
      await forge({ ...run, other: other.lines });
      const check = await verifyRun(await run.store.readRun(SAMPLE_RUN_ID));
      const judged = check.problems.filter((p) => p.code.startsWith("assessments."));
      const stopped = !check.ok && judged.length > 0;
      const recorded = judged.every((p) => p.file === "assessments.jsonl") &&
        (name.includes("link") || judged.every((p) => p.line !== null));
      tally.add(name, { stopped, recorded });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
  console.log(tally.line({ stopped: "fail to verify", recorded: "name the file and line" }));
  assert.deepEqual(tally.missed, []);
});
