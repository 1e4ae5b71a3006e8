/**
 * The writer of the seal's fault-injection test: runs a small run and, at the seal, kills itself with
 * SIGKILL just before its Nth filesystem step (`N` and `before` as arguments), or (`half`) in the middle of
 * the seal's Nth file write, after half its bytes. With a key file as fourth argument, the run is signed with
 * it. With a folder as fifth, the run is sealed unhindered and then copied (`exportRun`) into a file store
 * there, and the copy is the one stopped, at any step; when the runs folder holds a sealed run already (the
 * test makes it once and gives each copy its own), that run is copied and the runner is never loaded, since
 * loading it is most of a child's CPU time. Not a test itself; tests/attacks/seal_faults_test.ts starts it.
 * @module
 */
import { FileRunWriter, FileStore } from "../../lib/provevi/store/file_store.ts";
import { exportRun } from "../../lib/provevi/runs/export_run.ts";

const [runs, nth, mode, signKey, copyTo] = Deno.args as [string, string, string, string?, string?];
const target = Number(nth);
let count = 0;

// True while the run's writer seals: every filesystem call in that time is a step of the seal. With a copy to
// make, every step of the copy counts instead, from its first file to its last.
let sealing = false;
const seal = FileRunWriter.prototype.seal;
FileRunWriter.prototype.seal = async function (this: FileRunWriter, ...args: Parameters<typeof seal>) {
  if (copyTo) return await seal.apply(this, args);
  sealing = true;
  try {
    return await seal.apply(this, args);
  } finally {
    sealing = false;
  }
};
function inSeal(): boolean {
  return sealing;
}

function step(): void {
  if (!inSeal()) return;
  count += 1;
  if (count === target) Deno.kill(Deno.pid, "SIGKILL");
}

const open = Deno.open;
const rename = Deno.rename;
const renameSync = Deno.renameSync;
const copyFile = Deno.copyFile;
const writeTextFile = Deno.writeTextFile;
const writeFile = Deno.writeFile;
const writeFileSync = Deno.writeFileSync;
const sync = Deno.FsFile.prototype.sync;
const syncSync = Deno.FsFile.prototype.syncSync;
let writes = 0;
/** In `half` mode, true when this write is the one to stop in the middle of. */
function halfHere(): boolean {
  if (!inSeal()) return false;
  writes += 1;
  return mode === "half" && writes === target;
}
Object.assign(Deno, {
  open: (...args: Parameters<typeof Deno.open>) => (step(), open(...args)),
  rename: (...args: Parameters<typeof Deno.rename>) => (step(), rename(...args)),
  renameSync: (...args: Parameters<typeof Deno.renameSync>) => (step(), renameSync(...args)),
  copyFile: (...args: Parameters<typeof Deno.copyFile>) => (step(), copyFile(...args)),
  writeTextFile: async (path: string | URL, data: string, options?: Deno.WriteFileOptions) => {
    if (halfHere()) {
      await writeTextFile(path, data.slice(0, Math.floor(data.length / 2)), options);
      Deno.kill(Deno.pid, "SIGKILL");
    }
    step();
    return await writeTextFile(path, data, options);
  },
  writeFile: async (path: string | URL, data: Uint8Array, options?: Deno.WriteFileOptions) => {
    if (halfHere()) {
      await writeFile(path, data.subarray(0, data.length >> 1), options);
      Deno.kill(Deno.pid, "SIGKILL");
    }
    step();
    return await writeFile(path, data, options);
  },
  writeFileSync: (path: string | URL, data: Uint8Array, options?: Deno.WriteFileOptions) => {
    if (halfHere()) {
      writeFileSync(path, data.subarray(0, data.length >> 1), options);
      Deno.kill(Deno.pid, "SIGKILL");
    }
    step();
    return writeFileSync(path, data, options);
  },
});
Deno.FsFile.prototype.sync = function (this: Deno.FsFile) {
  step();
  return sync.call(this);
};
Deno.FsFile.prototype.syncSync = function (this: Deno.FsFile) {
  step();
  return syncSync.call(this);
};

/** Makes the small run (the runner loaded only here) and returns its ID. */
async function makeRun(): Promise<string> {
  const { RunFile } = await import("../../lib/provrun/run/mod.ts");
  const { runFile } = await import("../../lib/provrun/runner/mod.ts");
  const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada${
    signKey && signKey !== "-" ? `, sign_key: ${JSON.stringify(signKey)}` : ""
  } }
agent:
  name: writer
  backend: call
  model: "test:"
  script: { turns: [{ text: "48.2" }] }
prompt: Write the answer.
outputs: [answer.txt]
`);
  return (await runFile(file, { runs })).runId;
}

// A copy's source made already: the one run of the runs folder (the store's log, .log/, sits beside it).
const made = copyTo
  ? (await Array.fromAsync(Deno.readDir(runs)).catch(() => [])).find((e) => e.name.startsWith("run-"))?.name
  : undefined;
const runId = made ?? await makeRun();
if (copyTo) {
  sealing = true;
  await exportRun(runId, { from: new FileStore({ runs }), to: new FileStore({ runs: copyTo }) });
  sealing = false;
}
console.log(JSON.stringify({ runId, steps: count, writes }));
