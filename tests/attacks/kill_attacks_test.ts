/**
 * The kill and concurrency figures: real `provr run` processes killed with SIGKILL at random moments of
 * their runs, on the file store and on the SQLite store, lose no event (what is on disk is a whole, chained
 * prefix of the run), every completed run verifies and every killed run lists as `cut`; and four processes
 * writing runs into one SQLite file at once lose nothing and never meet `SQLITE_BUSY`.
 *
 * Bounded for CI: 22 kills (11 per store) and 4 × 25 concurrent runs; `PROVE_ATTACK_FULL=1` runs the
 * closing note's 4 × 100.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { taskRun } from "../_children.ts";
import type { EvidenceStore } from "../../lib/provevi/store/store.ts";
import { RunNotFound } from "../../lib/provevi/evidence/errors.ts";
import { listRuns } from "../../lib/provevi/runs/list_runs.ts";
import { openStore } from "../../lib/provevi/runs/open_store.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { Tally } from "./_tally.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const KILLS = 22;
const PER_PROCESS = Deno.env.get("PROVE_ATTACK_FULL") ? 100 : 25;

/** A small seeded generator (mulberry32): the same kill moments on every run of the test. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A run of a dozen tool calls, each an event or two, so that a kill can land anywhere in it. */
function runText(store: string | null, calls = 12): string {
  const writes = Array.from(
    { length: calls },
    (_, i) =>
      `      - tool_calls: [{ id: w${i}, name: write_file, args: { path: /output/part${i}.txt, content: "part ${i}" } }]`,
  );
  return `run: { org: acme, domain: demo, env: dev, actor: ada${store ? `, store: "${store}"` : ""} }
agent:
  name: writer
  backend: agent
  model: "test:"
  script:
    turns:
${writes.join("\n")}
      - text: "done"
prompt: Write the parts.
`;
}

/** The problems of a killed run other than its missing seal: an event lost, torn or out of its chain. */
async function lossOf(store: EvidenceStore, runs: string, id: string): Promise<string[]> {
  const text = await Deno.readTextFile(join(runs, id, "evidence", "events.jsonl")).catch(() => "");
  const lines = text.split("\n");
  const whole = text.endsWith("\n") || text === "" ? lines.slice(0, -1) : lines.slice(0, -1); // a torn last line is an append cut short
  const problems: string[] = [];
  whole.forEach((line, i) => {
    try {
      const event = JSON.parse(line) as { seq: number };
      if (event.seq !== i + 1 && event.seq !== i) problems.push(`event ${i} has seq ${event.seq}`);
    } catch {
      problems.push(`line ${i + 1} of events.jsonl is not JSON: an event was torn`);
    }
  });
  // Killed between its folder and its row (the SQLite store makes the folder first, and writes no event before
  // the row): the store holds nothing of the run, and the folder must hold no event either.
  const record = await store.readRun(id).catch((error) => {
    if (error instanceof RunNotFound) return null;
    throw error;
  });
  if (record === null) {
    if (whole.length > 0) {
      problems.push(`${whole.length} events in the folder of a run the store has no row of`);
    }
    return problems;
  }
  const check = await verifyRun(record, { store });
  // Killed between an event's line and its row: the file (the evidence) holds the last lines, the index lags it by
  // them. Nothing is lost; the run's row, made from its earlier events, says so of its status and end.
  const tail = check.problems.some((p) =>
    p.code === "rows.events_missing" && /are not in the store$/.test(p.message)
  );
  // Killed between the first event's line and its row: the run's row is as the store made it, before any event
  // (the fields run_created sets are null, and its settings have no rows), which is the same lag, from line 1.
  const fromFirst = tail &&
    check.problems.some((p) => / holds 0 rows of run .* are not in the store$/.test(p.message));
  for (const p of check.problems.map((p) => p.message)) {
    if (tail && /are not in the store$|: (status|ended_at) is .*, but its events say/.test(p)) continue;
    if (
      fromFirst && /: column \w+ is null, but its events say |^provevi_run_params \(.*\) is missing$/.test(p)
    ) {
      continue;
    }
    // What an unsealed run lacks, not what it lost: its seal, and the record of outputs written so far.
    if (
      /not sealed|manifest\.json is missing|holds \d+ rows and events\.jsonl \d+ lines|is not a recorded output/
        .test(p)
    ) continue;
    if (/last line|torn|incomplete/i.test(p) && !text.endsWith("\n")) continue;
    // Killed before its first event was written: there was nothing to lose.
    if (/has no events/.test(p) && whole.length === 0) continue;
    // A payload stored just before the kill, whose event never came: nothing refers to it, so nothing is lost.
    const orphan = p.match(/^provevi_payloads \(run_id "[^"]+", sha256 ([0-9a-f]{64})\) is missing$/);
    if (orphan && !whole.some((line) => line.includes(orphan[1]!))) continue;
    problems.push(p);
  }
  return problems;
}

/** What the kills found, in all. */
interface KillCounts {
  completed: number;
  cut: number;
  before: number;
  lost: number;
}

/** Starts one `provr run`, kills it `delay` ms after its run opened, and judges what it left. */
async function killOnce(
  k: number,
  options: { dir: string; delay: number; tally: Tally; counts: KillCounts },
): Promise<void> {
  const { dir, tally, counts } = options;
  const kind = k % 2 === 0 ? "file" : "sqlite";
  const runs = join(dir, `${kind}-runs`);
  const storeUri = kind === "sqlite" ? `sqlite:///${join(dir, "evidence.db")}` : "file";
  const file = join(dir, `run-${k}.yaml`);
  await Deno.writeTextFile(file, runText(null));
  const listed = () => Array.fromAsync(Deno.readDir(runs)).then((e) => e.map((x) => x.name), () => []);
  const before = new Set(await listed());
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...taskRun("provr"),
      "--runs",
      runs,
      "--store",
      storeUri,
      "run",
      file,
    ],
    cwd: dir,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  // Wait for the run to open, then kill it at a random moment of it (or, now and then, just after).
  const until = Date.now() + 60_000;
  let opened: string | undefined;
  while (!opened && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 20));
    opened = (await listed()).find((n) => n.startsWith("run-") && !before.has(n));
  }
  await new Promise((r) => setTimeout(r, options.delay));
  try {
    child.kill("SIGKILL");
  } catch {
    // It has ended.
  }
  const status = await child.status;
  const said = await stderr;
  const id = (await listed()).find((n) => n.startsWith("run-") && !before.has(n));
  if (!id) {
    counts.before += 1;
    tally.add(`kill ${k} (${kind}) before the run opened`, { stopped: true, recorded: true });
    return;
  }
  await using store = await openStore(storeUri, { runs });
  const row = (await listRuns(store, {})).runs.find((r) => r.run_id === id);
  let ok: boolean;
  if (status.success || row?.status === "completed") {
    const problems = (await verifyRun(await store.readRun(id), { store })).problems.map((p) => p.message);
    ok = problems.length === 0 && row?.status === "completed";
    counts.completed += 1;
    assert.deepEqual(problems, [], `${kind} ${id}: ${said}`);
  } else {
    const lost = await lossOf(store, runs, id);
    counts.lost += lost.length;
    counts.cut += 1;
    // A run killed before its row was written is not listed by the SQLite store: it holds nothing of it.
    ok = lost.length === 0 && (row === undefined ? kind === "sqlite" : row.status === "cut");
    assert.deepEqual(lost, [], `${kind} ${id}`);
    assert.ok(ok, `${kind} ${id} lists as ${row?.status}`);
  }
  tally.add(`kill ${k} (${kind})`, { stopped: ok, recorded: ok });
}

Deno.test(`${KILLS} kill -9s of provr run at random moments, on the file and SQLite stores: 0 events lost, completed runs verify, killed runs are cut`, async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-kills-" });
  const random = seeded(20261130);
  // The moments are drawn in order, as one sequence; the file store's kills and the SQLite store's go on side
  // by side, each store's one after another (each in its own runs folder and file, as before).
  const delays = Array.from({ length: KILLS }, () => Math.floor(random() * 1500));
  const tally = new Tally("kill -9 of provr run");
  const counts: KillCounts = { completed: 0, cut: 0, before: 0, lost: 0 };
  try {
    const lanes = await Promise.allSettled([0, 1].map(async (lane) => {
      for (let k = lane; k < KILLS; k += 2) await killOnce(k, { dir, delay: delays[k]!, tally, counts });
    }));
    for (const lane of lanes) if (lane.status === "rejected") throw lane.reason;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  console.log(
    `${
      tally.line({ stopped: "whole" })
    }: ${counts.cut} cut, ${counts.completed} completed before the kill, ` +
      `${counts.before} killed before the run opened; ${counts.lost} events lost`,
  );
  assert.equal(counts.lost, 0);
  assert.equal(tally.missed.length, 0, tally.line());
});

Deno.test(`4 processes × ${PER_PROCESS} runs into one SQLite file at once: 0 lost, 0 SQLITE_BUSY, every run verifies`, async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-many-" });
  const tally = new Tally(`4 × ${PER_PROCESS} concurrent runs into one SQLite file`);
  try {
    const db = join(dir, "evidence.db");
    const file = join(dir, "run.yaml");
    await Deno.writeTextFile(file, runText(`sqlite:///${db}`, 2));
    const children = [0, 1, 2, 3].map(() =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          join(ROOT, "tests/attacks/_many_runs.ts"),
          file,
          join(dir, "runs"),
          String(PER_PROCESS),
        ],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output()
    );
    const outputs = await Promise.all(children);
    const lines = outputs.flatMap((o) => new TextDecoder().decode(o.stdout).trim().split("\n"));
    const errors = outputs.map((o) => new TextDecoder().decode(o.stderr)).join("");
    const busy = (lines.join("\n") + errors).match(/SQLITE_BUSY|database is locked/g)?.length ?? 0;
    await using store = await openStore(`sqlite:///${db}`, { runs: join(dir, "runs") });
    let lost = 0;
    for (const line of lines) {
      const [word, id, status] = line.split(" ");
      if (word !== "run") {
        tally.add(line, { stopped: false, recorded: false });
        continue;
      }
      const problems = (await verifyRun(await store.readRun(id!), { store })).problems.map((p) => p.message);
      const text = await Deno.readTextFile(join(dir, "runs", id!, "evidence", "events.jsonl"));
      const row = (store as unknown as { run(id: string): Promise<{ events: number } | null> }).run(id!);
      const rows = (await row)?.events ?? -1;
      const inFile = text.split("\n").filter(Boolean).length;
      lost += Math.abs(inFile - rows);
      tally.add(id!, { stopped: status === "completed" && problems.length === 0, recorded: rows === inFile });
      assert.deepEqual(problems, [], id);
    }
    console.log(
      `${
        tally.line({ stopped: "completed and verified", recorded: "whole" })
      }; ${lost} lost, ${busy} SQLITE_BUSY`,
    );
    assert.equal(lines.length, 4 * PER_PROCESS, errors);
    assert.equal(busy, 0);
    assert.equal(lost, 0);
    assert.equal(tally.missed.length, 0, tally.line());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
