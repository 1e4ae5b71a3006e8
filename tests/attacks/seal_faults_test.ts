/**
 * A kill during the seal itself: the writer is stopped (SIGKILL) just before each filesystem step of the seal
 * in turn, and in the middle of each of its writes, and the run is then either sealed and verifies (a signed
 * run with its signature, by the trusted key), or unsealed and says so; never a manifest that verifies over
 * missing files, nor a sealed signed run without its signature.
 * @module
 */
import assert from "node:assert/strict";
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { readTrustedKey, writeKeyPair } from "../../lib/provevi/evidence/signing_key.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("seal faults");
const CHILD = new URL("./_seal_child.ts", import.meta.url).pathname;

/** How a child brings its run to the seal (tests/attacks/_seal_child.ts): `run`, `replay:DIR` or `copy:DIR`. */
type How = "run" | `replay:${string}` | `copy:${string}`;

interface Written {
  killed: boolean;
  code: number;
  stdout: string;
}

async function writer(runs: string, c: { nth: number; mode: "before" | "half"; key?: string; how: How }) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CHILD, runs, String(c.nth), c.mode, c.key ?? "-", c.how],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { killed: out.signal === "SIGKILL", code: out.code, stdout } satisfies Written;
}

/** What a writer that was never stopped counted of the seal: its steps, its writes and their trace. */
function counted(w: Written): { steps: number; writes: number; trace: string[] } {
  assert.equal(w.code, 0, w.stdout);
  return JSON.parse(w.stdout.trim().split("\n").at(-1)!);
}

/** Kills a writer before each step of the seal and in the middle of each write; judges each run left. */
async function attack(dir: string, signed: boolean, copy = false): Promise<void> {
  const failures: string[] = [];
  const key = signed ? join(dir, "signing.key") : undefined;
  if (key) await writeKeyPair(key);
  const trust = key ? [await readTrustedKey(`${key}.pub`)] : [];
  const name = copy ? "a signed run's copy" : signed ? "a signed seal" : "the seal";
  const judge = async (label: string, runs: string) => {
    label = `${label} of ${name}`;
    if (copy) {
      // A copy stopped before its run folder was made left nothing to judge; its source is untouched.
      const made = await Array.fromAsync(Deno.readDir(`${runs}-copy`)).catch(() => []);
      if (made.length === 0) {
        tally.add(label, { stopped: true, recorded: true });
        return;
      }
      runs = `${runs}-copy`;
    }
    // The store's log (.log/) sits beside the runs.
    const ids = (await Array.fromAsync(Deno.readDir(runs))).map((e) => e.name).filter((n) =>
      !n.startsWith(".")
    );
    assert.equal(ids.length, 1, label);
    const record = await new FileStore({ runs }).readRun(ids[0]!);
    const sealed = (await record.manifestText()) !== null;
    const check = await verifyRun(record, { trust });
    const says = check.problems.map((p) => p.message).some((p) =>
      /manifest|seal|events.jsonl is missing/i.test(p)
    );
    const signedOk = !signed || check.signedBy.length === 1;
    const ok = sealed ? check.ok && check.problems.length === 0 && signedOk : !check.ok && says;
    if (!ok) {
      failures.push(
        `${label}: sealed=${sealed} problems=${JSON.stringify(check.problems.map((p) => p.message))}`,
      );
    }
    tally.add(label, { stopped: ok, recorded: sealed || says });
  };
  // The run as the runner makes and seals it, once; each case writes it again through the store's writer
  // (replay), or copies it, and is stopped in its seal. The replayed seal must take the runner's very steps.
  const reference = join(dir, "reference");
  const made = counted(await writer(reference, { nth: 10_000, mode: "before", key, how: "run" }));
  const how = (runs: string): How => copy ? `copy:${runs}-copy` : `replay:${reference}`;
  const source = async (runs: string) => {
    // A copy's source is the run sealed unhindered above, the same for every case: each gets its own.
    if (copy) await cp(reference, runs, { recursive: true });
  };
  await source(join(dir, "whole"));
  const { steps, writes, trace } = counted(
    await writer(join(dir, "whole"), { nth: 10_000, mode: "before", key, how: how(join(dir, "whole")) }),
  );
  if (!copy) {
    assert.deepEqual(trace, made.trace, "the replayed run's seal takes the runner's steps");
    assert.equal(writes, made.writes, "the replayed run's seal makes the runner's writes");
  }
  await judge("no kill", join(dir, "whole"));
  // A kill before each step, and in the middle of each write.
  const cases = [
    ...Array.from({ length: steps }, (_, i) => ({ nth: i + 1, mode: "before" as const })),
    ...Array.from({ length: writes }, (_, i) => ({ nth: i + 1, mode: "half" as const })),
  ];
  // Six writers at a time, each taking the next case as one ends: a writer waits on its disk more than on a core.
  const queue = [...cases];
  await Promise.all(Array.from({ length: 6 }, async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const { nth, mode } = c;
      const runs = join(dir, `${mode}-${nth}`);
      await source(runs);
      const r = await writer(runs, { nth, mode, key, how: how(runs) });
      assert.ok(r.killed, `${mode} ${nth} was not reached: ${r.stdout}`);
      await judge(
        mode === "before" ? `a kill before step ${nth} of ${steps}` : `a kill in the middle of write ${nth}`,
        runs,
      );
    }
  }));
  assert.ok(steps >= 5, `the seal took ${steps} steps`);
  assert.ok(writes >= (signed ? 2 : 1), `the seal made ${writes} writes`);
  assert.deepEqual(failures, []);
}

Deno.test("a writer killed at each step of the seal leaves a run that is sealed and verifies, or unsealed and says so", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-seal-" });
  await attack(dir, false);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a writer killed at each step of a signed seal leaves a run that is sealed, signed and verifies with --trust, or unsealed and says so", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-signed-seal-" });
  await attack(dir, true);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a copy (prove export) of a signed run killed at each step is sealed, signed and verifies with --trust, or unsealed and says so", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-copy-seal-" });
  await attack(dir, true, true);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the seal fault counts", () => {
  console.log(tally.line({ stopped: "sealed and verify, or unsealed and say so", recorded: "recorded" }));
  assert.equal(tally.missed.length, 0, tally.line());
});
