/**
 * Attacks on the reading of a run's `events.jsonl` by its shape rather than its size: a sealed run's file made a
 * sparse file just under the 512 MiB cap (one line of zeros after its events), and one with four million empty
 * lines after them (4 MB), and one event's line repeated after them. `prove verify` read the first whole into a
 * string, split and hashed it: 2.2 GB of memory and 3.5 s; made a problem of each empty line of the second: 3 GB
 * and 20 s (a few tens of MB of them took all the memory there is); and one or two of each repeated line. A line is now refused once it passes 16 MiB, as the bytes come, and the
 * reading stops after 1,000 problems of its lines, each in one line of the answer. And the chain refuses an
 * event whose line is past 16 MiB, so that no writer of the toolkit makes a file that its readers refuse.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { writeKeyPair } from "../../lib/provevi/evidence/signing_key.ts";
import { measuredInChild, sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("events size attacks");
const MiB = 1024 * 1024;

const SHAPES: Record<string, { grow: (path: string) => Promise<void>; answer: RegExp }> = {
  "a sparse file just under the 512 MiB cap": {
    grow: (path) => Deno.truncate(path, 512 * MiB - 4096),
    answer: /^events\.unreadable .*line 14 holds more than 16777216 bytes/,
  },
  "four million empty lines after the events": {
    grow: async (path) => {
      using file = await Deno.open(path, { append: true });
      const lines = new Uint8Array(4_000_000).fill(0x0a);
      for (let done = 0; done < lines.length;) done += await file.write(lines.subarray(done));
    },
    answer: /^events\.unreadable events\.jsonl has 1000 problems by line 1013/,
  },
  "one event's line repeated 20,000 times after the events": {
    grow: async (path) => {
      const line = (await Deno.readTextFile(path)).split("\n").find((l) => l.includes('"note_added"'))!;
      using file = await Deno.open(path, { append: true });
      const lines = new TextEncoder().encode(`${line}\n`.repeat(20_000));
      for (let done = 0; done < lines.length;) done += await file.write(lines.subarray(done));
    },
    answer: /^events\.unreadable events\.jsonl has 100\d problems by line \d+: the rest of it is not read$/,
  },
};

for (const [shape, { grow, answer }] of Object.entries(SHAPES)) {
  Deno.test(`prove verify of a run whose events.jsonl is ${shape} answers in one line, in bounded memory`, async () => {
    const run = await sampleRun("attack-events-size-");
    try {
      await grow(join(run.folder, "evidence", "events.jsonl"));
      // measured in a process of its own: this one's RSS counts what the files running beside it hold
      const { grew, got: check } = await measuredInChild<{
        ok: boolean;
        problems: { code: string; message: string }[];
      }>("./_events_size_work.ts", "verify", run.folder);
      const found = check.problems.filter((p) => p.code.startsWith("events.")).map((p) =>
        `${p.code} ${p.message}`
      );
      console.log(`${shape}: ${Math.round(grew / MiB)} MiB more memory`);
      tally.add(shape, {
        stopped: grew < 256 * MiB,
        recorded: !check.ok && found.some((f) => answer.test(f)),
      });
      assert.ok(grew < 256 * MiB, `the check took ${Math.round(grew / MiB)} MiB`);
      assert.equal(check.ok, false);
      assert.ok(found.some((f) => answer.test(f)), JSON.stringify(found));
      assert.ok(check.problems.length <= 1010, `${check.problems.length} problems`);
      assert.ok(found.every((f) => !f.includes("\n")));
    } finally {
      await Deno.remove(run.dir, { recursive: true });
    }
  });
}

Deno.test("prove sign of a run whose events.jsonl is a sparse file just under the cap refuses in one line, in bounded memory", async () => {
  const run = await sampleRun("attack-events-size-");
  try {
    const events = join(run.folder, "evidence", "events.jsonl");
    const before = await Deno.readFile(events);
    await Deno.truncate(events, 512 * MiB - 4096);
    const key = join(run.dir, "signing.key");
    await writeKeyPair(key);
    const { grew, got: error } = await measuredInChild<string | null>(
      "./_events_size_work.ts",
      "sign",
      run.folder,
      key,
    );
    console.log(`prove sign, a sparse events.jsonl: ${Math.round(grew / MiB)} MiB more memory: ${error}`);
    const said = /events\.jsonl line 14 holds more than 16777216 bytes/;
    tally.add("prove sign of a sparse events.jsonl", {
      stopped: grew < 64 * MiB,
      recorded: said.test(error ?? "") && !error!.includes("\n"),
    });
    assert.ok(grew < 64 * MiB, `the signing took ${Math.round(grew / MiB)} MiB`);
    assert.match(error ?? "", said);
    assert.ok(!error!.includes("\n"));
    // nothing written, nothing lost: no attestation, the file's events as they were
    await assert.rejects(
      Deno.lstat(join(run.folder, "evidence", "attestation.dsse.json")),
      Deno.errors.NotFound,
    );
    const after = await Deno.open(events);
    const head = new Uint8Array(before.length);
    await after.read(head);
    after.close();
    assert.deepEqual(head, before);
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("prove list of runs, one of whose events.jsonl is a sparse file just under the cap, lists it in bounded memory", async () => {
  const run = await sampleRun("attack-events-size-");
  try {
    await Deno.truncate(join(run.folder, "evidence", "events.jsonl"), 512 * MiB - 4096);
    const { grew, got } = await measuredInChild<{ run_id: string; tokens: number | null }[]>(
      "./_events_size_work.ts",
      "list",
      join(run.dir, "runs"),
    );
    console.log(
      `prove list, a sparse events.jsonl: ${Math.round(grew / MiB)} MiB more memory: ${JSON.stringify(got)}`,
    );
    tally.add("prove list of a sparse events.jsonl", {
      stopped: grew < 64 * MiB,
      recorded: got.length === 1 && got[0]!.tokens === null,
    });
    assert.ok(grew < 64 * MiB, `the listing took ${Math.round(grew / MiB)} MiB`);
    // listed, its tokens unknown: the whole file is not read
    assert.deepEqual(got.map((r) => r.tokens), [null]);
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});

Deno.test("the chain refuses an event whose line is past 16 MiB, in one line, and goes on", () => {
  const chain = new EventChain("run-20261202T000000Z-0000000a");
  assert.throws(
    () =>
      chain.next({
        type: "note_added",
        component: "RunContext",
        actor: "t",
        data: { text: "é".repeat(9 * MiB) },
      }),
    /^EvidenceError: the note_added event's line holds more than 16777216 bytes: no reader takes it; record the value as a payload$/,
  );
  const next = chain.next({ type: "run_created", component: "RunContext", actor: "t", data: { agent: "q" } });
  assert.equal(next.event.seq, 0);
  tally.add("an event line past 16 MiB, written", { stopped: true, recorded: true });
});

Deno.test("events size attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
