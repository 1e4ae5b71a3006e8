/**
 * The writer of the seal's fault-injection test: brings a run to its seal and kills itself with SIGKILL just
 * before the seal's Nth filesystem step (`N` and `before` as arguments), or (`half`) in the middle of the seal's
 * Nth file write, after half its bytes. With a key file as fourth argument, the run is signed with it. The fifth
 * says how the run reaches its seal:
 *
 * - `run`: the runner makes a small run and seals it, as provr does (the test's reference: loading the runner
 *   is most of a child's CPU time, so it is made once per case of the test);
 * - `replay:DIR`: the reference run sealed in the runs folder DIR is written again, event by event, payload by
 *   payload and span by span, through the store's writer into a fresh run of the same ID, and sealed as the
 *   runner's recorder seals (its lost events, the key); only the store is loaded. The test checks that this
 *   seal takes the very steps of the runner's, by the trace each child prints;
 * - `copy:DIR`: the sealed run in the runs folder is copied (`exportRun`) into a file store at DIR, and the copy
 *   is the one stopped, at any step of it, from its first file to its last.
 *
 * Prints the run's ID, the steps and writes counted, and the trace of the steps (each call and its path under
 * the runs folder). Not a test itself; tests/attacks/seal_faults_test.ts starts it.
 * @module
 */
import { join, relative } from "node:path";
import { FileRunWriter, FileStore } from "../../lib/provevi/store/file_store.ts";
import { readSigningKey } from "../../lib/provevi/evidence/signing_key.ts";
import { keptEvidenceProblem } from "../../lib/provevi/store/kept_evidence.ts";
import { SpansFile } from "../../lib/provevi/evidence/spans_file.ts";

const [runs, nth, mode, signKey, how] = Deno.args as [string, string, string, string, string];
const key = signKey === "-" ? undefined : signKey;
const target = Number(nth);
let count = 0;
const trace: string[] = [];
const copyTo = how.startsWith("copy:") ? how.slice("copy:".length) : undefined;
const root = copyTo ?? runs;

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

function step(call: string, path?: string | URL): void {
  if (!sealing) return;
  count += 1;
  trace.push(path === undefined ? call : `${call} ${relative(root, String(path))}`);
  if (count === target) Deno.kill(Deno.pid, "SIGKILL");
}

const open = Deno.open;
const openSync = Deno.openSync;
// The path each open file was opened at, so that the trace names the file a sync reaches.
const opened = new WeakMap<Deno.FsFile, string | URL>();
const named = (file: Deno.FsFile, path: string | URL) => (opened.set(file, path), file);
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
  if (!sealing) return false;
  writes += 1;
  return mode === "half" && writes === target;
}
Object.assign(Deno, {
  open: async (
    ...args: Parameters<typeof Deno.open>
  ) => (step("open", args[0]), named(await open(...args), args[0])),
  // Not a step (the seal's steps are as they were): only named, for the trace of its syncs.
  openSync: (...args: Parameters<typeof Deno.openSync>) => named(openSync(...args), args[0]),
  rename: (...args: Parameters<typeof Deno.rename>) => (step("rename", args[1]), rename(...args)),
  renameSync: (...args: Parameters<typeof Deno.renameSync>) => (step("rename", args[1]), renameSync(...args)),
  copyFile: (...args: Parameters<typeof Deno.copyFile>) => (step("copy", args[1]), copyFile(...args)),
  writeTextFile: async (path: string | URL, data: string, options?: Deno.WriteFileOptions) => {
    if (halfHere()) {
      await writeTextFile(path, data.slice(0, Math.floor(data.length / 2)), options);
      Deno.kill(Deno.pid, "SIGKILL");
    }
    step("write", path);
    return await writeTextFile(path, data, options);
  },
  writeFile: async (path: string | URL, data: Uint8Array, options?: Deno.WriteFileOptions) => {
    if (halfHere()) {
      await writeFile(path, data.subarray(0, data.length >> 1), options);
      Deno.kill(Deno.pid, "SIGKILL");
    }
    step("write", path);
    return await writeFile(path, data, options);
  },
  writeFileSync: (path: string | URL, data: Uint8Array, options?: Deno.WriteFileOptions) => {
    if (halfHere()) {
      writeFileSync(path, data.subarray(0, data.length >> 1), options);
      Deno.kill(Deno.pid, "SIGKILL");
    }
    step("write", path);
    return writeFileSync(path, data, options);
  },
});
Deno.FsFile.prototype.sync = function (this: Deno.FsFile) {
  step("sync", opened.get(this));
  return sync.call(this);
};
Deno.FsFile.prototype.syncSync = function (this: Deno.FsFile) {
  step("sync", opened.get(this));
  return syncSync.call(this);
};

/** Makes the small run with the runner (loaded only here) and returns its ID. */
async function makeRun(): Promise<string> {
  const { RunFile } = await import("../../lib/provrun/run/mod.ts");
  const { runFile } = await import("../../lib/provrun/runner/mod.ts");
  const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada${key ? `, sign_key: ${JSON.stringify(key)}` : ""} }
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

/** The one run of a runs folder (the store's log, .log/, sits beside it), or undefined. */
async function onlyRun(folder: string): Promise<string | undefined> {
  const entries = await Array.fromAsync(Deno.readDir(folder)).catch(() => []);
  return entries.find((e) => e.name.startsWith("run-"))?.name;
}

/**
 * Writes the reference run again into `runs` through the store's writer, as the runner's recorder wrote it
 * (the pack's payloads in their order, each before the event that names it; the events; the spans; the
 * output), and seals it as the recorder does. Returns its ID.
 */
async function replayRun(from: string): Promise<string> {
  const { readEventsText } = await import("../../lib/provevi/evidence/read_events.ts");
  const { readPack } = await import("../../lib/provevi/evidence/payload_pack.ts");
  const { payloadsOf } = await import("../../lib/provevi/evidence/event.ts");
  const runId = (await onlyRun(from))!;
  const record = await new FileStore({ runs: from }).readRun(runId);
  const manifest = JSON.parse((await record.manifestText())!);
  const { events, lines } = readEventsText((await record.eventsText())!);
  const store = new FileStore({ runs });
  const writer = await store.openRun(runId) as FileRunWriter;
  const put = new Set<string>();
  const putPayload = async (sha256: string) => {
    if (!put.has(sha256)) put.add(await writer.putPayload(await record.payload(sha256)));
  };
  const pack = await record.payloadPack();
  for (const r of pack === null ? [] : readPack(pack).records) await putPayload(r.sha256);
  for (const [i, event] of events.entries()) {
    for (const sha256 of payloadsOf(event)) await putPayload(sha256);
    writer.appendSync(lines[i]!, event);
  }
  const spans = await Deno.readFile(join(from, runId, "spans.jsonl")).catch(() => null);
  if (spans) new SpansFile(writer.folder).appendLines(spans);
  await Deno.mkdir(join(writer.folder, "output"));
  for await (const e of Deno.readDir(join(from, runId, "output"))) {
    await Deno.copyFile(join(from, runId, "output", e.name), join(writer.folder, "output", e.name));
  }
  const sealed = await writer.seal({
    lost: manifest.lost,
    signingKey: key ? await readSigningKey(key) : undefined,
  });
  const lost = await keptEvidenceProblem(writer.folder, sealed);
  if (lost !== null) throw new Error(`the replayed run was sealed, but its evidence was not kept: ${lost}`);
  return runId;
}

let runId: string;
if (copyTo) {
  const { exportRun } = await import("../../lib/provevi/runs/export_run.ts");
  runId = (await onlyRun(runs))!;
  sealing = true;
  await exportRun(runId, { from: new FileStore({ runs }), to: new FileStore({ runs: copyTo }) });
  sealing = false;
} else if (how.startsWith("replay:")) {
  runId = await replayRun(how.slice("replay:".length));
} else {
  runId = await makeRun();
}
console.log(JSON.stringify({ runId, steps: count, writes, trace }));
