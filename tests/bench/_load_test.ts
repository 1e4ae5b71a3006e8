import assert from "node:assert/strict";
import { join } from "node:path";
import { loadOption, startLoad } from "./_load.ts";

Deno.test("loadOption() reads --load, --load=io and --load=cpu, else BENCH_LOAD, and leaves the bench names", () => {
  assert.deepEqual(loadOption(["--load", "recorder"], undefined), { kind: "io+cpu", rest: ["recorder"] });
  assert.deepEqual(loadOption(["policy", "--load=io"], undefined), { kind: "io", rest: ["policy"] });
  assert.deepEqual(loadOption(["--load=cpu"], "io"), { kind: "cpu", rest: [] });
  assert.deepEqual(loadOption(["recorder"], "io+cpu"), { kind: "io+cpu", rest: ["recorder"] });
  assert.deepEqual(loadOption(["recorder"], "0"), { kind: null, rest: ["recorder"] });
  assert.deepEqual(loadOption([], undefined), { kind: null, rest: [] });
});

Deno.test("loadOption() refuses a load it does not know, naming it", () => {
  assert.throws(() => loadOption(["--load=disk"], undefined), /takes io, cpu or io\+cpu, not "disk"/);
  assert.throws(() => loadOption([], "heavy"), /not "heavy"/);
});

Deno.test("startLoad() writes and fsyncs files until stopped, then removes them and says what the bench ran under", async () => {
  const parent = await Deno.makeTempDir();
  const dir = join(parent, "load");
  await Deno.mkdir(dir);
  const load = await startLoad("io+cpu", { dir });
  // The disk writer goes round its eight files; wait (generously: the machine may be busy) until it has.
  const deadline = Date.now() + 60_000;
  let files: string[] = [];
  while (Date.now() < deadline) {
    files = [...Deno.readDirSync(dir)].map((e) => e.name);
    if (files.length >= 2) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(files.every((f) => /^load-[0-7]\.bin$/.test(f)) && files.length >= 2, files.join(", "));
  const line = await load.stop();
  assert.match(line, /^bench ran under load \(io\+cpu\): 1-minute load average [0-9.–]+ while it ran \(/);
  assert.deepEqual([...Deno.readDirSync(parent)], []);
  await Deno.remove(parent);
});

/** True while the process runs: a zombie (ended, not yet reaped) has ended. */
async function running(pid: number): Promise<boolean> {
  // through ps: reading /proc/PID/stat needs every permission in Deno, and the test set does not grant it
  const out = await new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)], stdout: "piped" })
    .output();
  const state = new TextDecoder().decode(out.stdout).trim();
  return state !== "" && !state.startsWith("Z");
}

/** Whether each of the processes is running. */
const eachRunning = (pids: number[]) => Promise.all(pids.map(running));

Deno.test("the load's processes end themselves when the bench that started them is killed without stopping them", async () => {
  const dir = await Deno.makeTempDir();
  const script = `import { startLoad } from ${JSON.stringify(new URL("./_load.ts", import.meta.url).href)};
    const load = await startLoad("io+cpu", { dir: ${JSON.stringify(dir)} });
    console.log(JSON.stringify(load.pids));
    await new Promise(() => {});`;
  const bench = new Deno.Command(Deno.execPath(), {
    args: ["eval", "-q", script],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = bench.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  const pids: number[] = JSON.parse(text);
  assert.equal(pids.length, 2);
  assert.deepEqual(await eachRunning(pids), pids.map(() => true));
  bench.kill("SIGKILL");
  await bench.status;
  reader.cancel().catch(() => {});
  const deadline = Date.now() + 60_000; // generous: the machine may be busy
  while ((await eachRunning(pids)).some((r) => r) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(await eachRunning(pids), pids.map(() => false));
  await Deno.remove(dir, { recursive: true });
});
