/**
 * A provr run that kills itself with SIGKILL at one point, for the resume tests: `deno run -A _kill_child.ts RUNS
 * FILE POINT`, where POINT is one of
 *
 * - `event:N` (before the Nth event is written) or `torn:N` (in the middle of its line);
 * - `payload:N`, in the middle of the Nth payload's bytes;
 * - `model:N`, inside the Nth model call, before it answers;
 * - `tool:N` (the Nth sandbox tool call has run, its result not yet recorded) or `tool-start:N` (before it runs);
 * - `seal:tmp` (the seal has begun, no manifest), `seal:rename` (the manifest written, not yet named) or
 *   `seal:done` (sealed, before the folders are synced).
 *
 * Not a test itself; tests/provrun/replay/resume_kill_test.ts starts it.
 * @module
 */
import { PACK_LIMIT, packRecord } from "../../../lib/provevi/evidence/payload_pack.ts";
import { join } from "node:path";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { FileRunWriter } from "../../../lib/provevi/store/file_store.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
// The classes' own files, not their folders' mod.ts: a child that only runs a run loads what the runner loads,
// not the agent programs' backends and the rest of those folders (#25).
import { Sandbox } from "../../../lib/provrun/sandbox/sandbox.ts";
import { ScriptedModel } from "../../../lib/provrun/backends/scripted_model.ts";

const [runs, path, point] = Deno.args as [string, string, string];
const [kind, at] = point.split(":") as [string, string];
const target = Number(at);
const die = (): never => {
  Deno.kill(Deno.pid, "SIGKILL");
  throw new Error("unreachable");
};
const counts: Record<string, number> = {};
const nth = (what: string) => (counts[what] = (counts[what] ?? 0) + 1);

const appendSync = FileRunWriter.prototype.appendSync;
const appendMany = FileRunWriter.prototype.appendMany;
function beforeLines(writer: FileRunWriter, lines: readonly string[]): void {
  for (const line of lines) {
    const n = nth("event");
    if (n !== target || (kind !== "event" && kind !== "torn")) continue;
    const file = Deno.openSync(join(writer.folder, "evidence", "events.jsonl"), { append: true });
    const before = lines.slice(0, lines.indexOf(line)).map((l) => l + "\n").join("");
    const half = kind === "torn" ? line.slice(0, Math.floor(line.length / 2)) : "";
    file.writeSync(new TextEncoder().encode(before + half));
    die();
  }
}
FileRunWriter.prototype.appendSync = function (this: FileRunWriter, line, event) {
  beforeLines(this, [line]);
  return appendSync.call(this, line, event);
};
FileRunWriter.prototype.appendMany = function (this: FileRunWriter, lines, events) {
  beforeLines(this, lines);
  return appendMany.call(this, lines, events);
};

const putPayload = FileRunWriter.prototype.putPayload;
FileRunWriter.prototype.putPayload = function (this: FileRunWriter, bytes: Uint8Array) {
  if (kind === "payload" && nth("payload") === target) {
    // Killed part way through the payload's write: half its record in payloads.pack (format 2), or half its
    // file in payloads/ for a payload of 256 KiB or more.
    const sha = sha256Hex(bytes);
    if (bytes.length < PACK_LIMIT) {
      const record = packRecord(sha, bytes);
      const pack = join(this.folder, "evidence", "payloads.pack");
      Deno.writeFileSync(pack, record.subarray(0, Math.floor(record.length / 2)), { append: true });
    } else {
      const file = join(this.folder, "evidence", "payloads", sha);
      Deno.writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length / 2)), { createNew: true });
    }
    die();
  }
  return putPayload.call(this, bytes);
};

for (const method of ["doGenerate", "doStream"] as const) {
  const original = ScriptedModel.prototype[method];
  // deno-lint-ignore no-explicit-any
  (ScriptedModel.prototype as any)[method] = function (this: ScriptedModel, options: never) {
    if (kind === "model" && nth("model") === target) die();
    // deno-lint-ignore no-explicit-any
    return (original as any).call(this, options);
  };
}

const call = Sandbox.prototype.callWithConsole;
Sandbox.prototype.callWithConsole = async function (this: Sandbox, ...args: Parameters<typeof call>) {
  const n = kind.startsWith("tool") ? nth("tool") : 0;
  if (kind === "tool-start" && n === target) die();
  const out = await call.apply(this, args);
  if (kind === "tool" && n === target) die();
  return out;
};

if (kind === "seal") {
  const writeFileSync = Deno.writeFileSync;
  const renameSync = Deno.renameSync;
  Object.assign(Deno, {
    writeFileSync: (...a: Parameters<typeof Deno.writeFileSync>) => {
      if (at === "tmp" && String(a[0]).endsWith("manifest.json.tmp")) die();
      return writeFileSync(...a);
    },
    renameSync: (...a: Parameters<typeof Deno.renameSync>) => {
      if (at === "rename" && String(a[1]).endsWith("manifest.json")) die();
      renameSync(...a);
      if (at === "done" && String(a[1]).endsWith("manifest.json")) die();
    },
  });
}

await runFile(await RunFile.load(path), { runs });
