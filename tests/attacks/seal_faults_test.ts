/**
 * A kill during the seal itself: the writer is stopped (SIGKILL) just before each filesystem step of the seal
 * in turn (and once in the middle of writing the manifest), and the run is then either sealed and verifies,
 * or unsealed and says so; never a manifest that verifies over missing files.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore, verifyRun } from "../../lib/provevi/mod.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("seal faults");
const CHILD = new URL("./_seal_child.ts", import.meta.url).pathname;

async function writer(runs: string, nth: number, mode: "before" | "half") {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CHILD, runs, String(nth), mode],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { killed: out.signal === "SIGKILL", code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

Deno.test("a writer killed at each step of the seal leaves a run that is sealed and verifies, or unsealed and says so", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-seal-" });
  const failures: string[] = [];
  const judge = async (label: string, runs: string) => {
    const ids = (await Array.fromAsync(Deno.readDir(runs))).map((e) => e.name);
    assert.equal(ids.length, 1, label);
    const record = await new FileStore({ runs }).readRun(ids[0]!);
    const sealed = (await record.manifestText()) !== null;
    const check = await verifyRun(record);
    const says = check.problems.some((p) => /manifest|seal/i.test(p));
    const ok = sealed ? check.ok && check.problems.length === 0 : !check.ok && says;
    if (!ok) failures.push(`${label}: sealed=${sealed} problems=${JSON.stringify(check.problems)}`);
    tally.add(label, { stopped: ok, recorded: sealed || says });
  };
  // How many steps the seal takes, from a writer that is never stopped.
  const whole = await writer(join(dir, "whole"), 10_000, "before");
  assert.equal(whole.code, 0, whole.stdout);
  const steps = JSON.parse(whole.stdout.trim().split("\n").at(-1)!).steps as number;
  await judge("no kill", join(dir, "whole"));
  // A kill before each step, five writers at a time.
  const all = Array.from({ length: steps }, (_, i) => i + 1);
  for (let i = 0; i < all.length; i += 5) {
    await Promise.all(
      all.slice(i, i + 5).map(async (nth) => {
        const runs = join(dir, `before-${nth}`);
        const r = await writer(runs, nth, "before");
        assert.ok(r.killed, `step ${nth} of ${steps} was not reached: ${r.stdout}`);
        await judge(`a kill before step ${nth} of ${steps}`, runs);
      }),
    );
  }
  const half = await writer(join(dir, "half"), 0, "half");
  assert.ok(half.killed);
  await judge("a kill in the middle of the manifest's write", join(dir, "half"));
  assert.ok(steps >= 5, `the seal took ${steps} steps`);
  assert.deepEqual(failures, []);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the seal fault counts", () => {
  console.log(tally.line({ stopped: "sealed and verify, or unsealed and say so", recorded: "recorded" }));
  assert.equal(tally.missed.length, 0, tally.line());
});
