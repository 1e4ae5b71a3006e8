/**
 * Files named on the command line that are not files: a FIFO given (or planted where a user keeps a key) as a
 * log's or a witness's verifier key, a checkpoint of `prove log consistency` or `--since`, a witness's private
 * key, or a fork's `--prompt`. Each was read with `Deno.readTextFileSync` (or `readTextFile`), which opens a FIFO
 * and waits for a writer for ever: the command hung. Now each is read as a regular file only, bounded
 * (`cli/_argument_file.ts`), and refused in one line. Each case runs the command in a child, killed if it has
 * not ended within a generous bound: a hang is the failure this file looks for. provtrace's rows key, read
 * with `Deno.readTextFile`, is read the same way.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ProveviError } from "../../lib/provevi/evidence/errors.ts";
import { COSIGNATURE_TYPE, ed25519Signer, noteKeyId } from "../../lib/provevi/log/note.ts";
import { logVerifier, witnessVerifier } from "../../lib/provevi/log/trust_policy.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { packRecord } from "../../lib/provevi/evidence/payload_pack.ts";
import { RECEIVED_FILE } from "../../lib/provevi/receiver/daemon_run.ts";
import { ReceivedBodies } from "../../lib/provevi/receiver/received_bodies.ts";
import { readRowsKey } from "../../lib/provtrace/db/rows_key.ts";
import { taskRun } from "../_children.ts";
import { beforeTimeout } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("files named on the command line");
/** A verifier key of the right form and hash whose 32 bytes are no point of Ed25519. */
const NOT_A_POINT = "log.example+b487124c+AQECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g";

/** Runs a command in a child; "hang" when it has not ended within the bound (then it is killed). */
async function runChild(
  which: "prove" | "provr",
  args: string[],
): Promise<{ code: number | "hang"; err: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...taskRun(which), ...args],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const outcome = await beforeTimeout(child.status, 120_000);
  if (outcome === "timeout") {
    try {
      child.kill("SIGKILL");
    } catch { /* ended just now */ }
  }
  const err = await new Response(child.stderr).text();
  return { code: outcome === "timeout" ? "hang" : outcome.code, err: err.trim() };
}

Deno.test("a FIFO named on the command line as a key, a checkpoint or a prompt is refused, not waited on", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-argfile-" });
  const fifo = join(dir, "fifo");
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success, "mkfifo");
  const runs = join(dir, "runs");
  await Deno.mkdir(runs);
  const cases: [string, "prove" | "provr", string[]][] = [
    ["verify --log-key a FIFO", "prove", ["--runs", runs, "verify", "run-x", "--log-key", fifo]],
    ["log audit --log-key a FIFO", "prove", ["--runs", runs, "log", "audit", "--log-key", fifo]],
    ["log audit --witness a FIFO", "prove", [
      "--runs",
      runs,
      "log",
      "audit",
      "--log-key",
      ed25519Signer("log.example", new Uint8Array(32)).verifier.vkey,
      "--witness",
      fifo,
    ]],
    ["log audit --since a FIFO", "prove", ["--runs", runs, "log", "audit", "--since", fifo]],
    // found by review7: a trusted key (and a signing key) was read with readTextFileSync
    ["verify --trust a FIFO", "prove", ["--runs", runs, "verify", "run-x", "--trust", fifo]],
    ["log consistency with a FIFO as a checkpoint", "prove", [
      "--runs",
      runs,
      "log",
      "consistency",
      fifo,
      "1",
    ]],
    ["witness --key a FIFO", "prove", ["witness", "--key", fifo, "--state", dir, "--log", NOT_A_POINT]],
    ["run --from --prompt a FIFO", "provr", [
      "--runs",
      runs,
      "run",
      "--from",
      "run-x",
      "--at",
      "1",
      "--prompt",
      fifo,
    ]],
  ];
  const failed: string[] = [];
  for (const [name, which, args] of cases) {
    const { code, err } = await runChild(which, args);
    const lines = err.split("\n").filter((l) => l !== "");
    const stopped = code !== "hang" && code !== 0 && lines.length === 1 &&
      lines[0]!.startsWith(`${which}: `) &&
      /FIFO|neither a verifier key/.test(lines[0]!);
    tally.add(name, { stopped, recorded: true });
    if (!stopped) failed.push(`${name}: ${code} ${err.slice(0, 300)}`);
  }
  console.log(tally.line());
  await Deno.remove(dir, { recursive: true });
  assert.deepEqual(failed, []);
});

Deno.test("a verifier key whose bytes are no Ed25519 point is refused in one line, not a crash", async () => {
  const points = new Tally("verifier keys that are no key");
  const failed: string[] = [];
  const cases: [string, () => unknown][] = [
    ["logVerifier", () => logVerifier(NOT_A_POINT)],
    [
      "witnessVerifier",
      () => witnessVerifier(NOT_A_POINT.replace("+AQ", "+BA").replace("b487124c", cosignId())),
    ],
  ];
  for (const [name, make] of cases) {
    let error: unknown = null;
    try {
      make();
    } catch (e) {
      error = e;
    }
    const stopped = error instanceof ProveviError && /not a point of the curve/.test(error.message);
    points.add(name, { stopped, recorded: true });
    if (!stopped) failed.push(`${name}: ${String(error)}`);
  }
  const runs = await Deno.makeTempDir({ prefix: "attack-vkey-" });
  const { code, err } = await runChild("prove", ["--runs", runs, "log", "audit", "--log-key", NOT_A_POINT]);
  const stopped = code === 2 || code === 1
    ? err.split("\n").length === 1 && /^prove: .*not a point of the curve/.test(err)
    : false;
  points.add("prove log audit --log-key", { stopped, recorded: true });
  if (!stopped) failed.push(`prove log audit --log-key: ${code} ${err.slice(0, 300)}`);
  console.log(points.line());
  await Deno.remove(runs, { recursive: true });
  assert.deepEqual(failed, []);
});

/** The key ID a cosignature/v1 key of NOT_A_POINT's bytes has under its name. */
function cosignId(): string {
  const key = Uint8Array.from(atob(NOT_A_POINT.split("+")[2]!), (c) => c.charCodeAt(0)).subarray(1);
  return noteKeyId("log.example", COSIGNATURE_TYPE, key).toString(16).padStart(8, "0");
}

Deno.test("a rows key that is a FIFO or a file of gigabytes is refused in one line, not waited on or read whole", async () => {
  const keys = new Tally("rows keys that are no file of a key");
  const dir = await Deno.makeTempDir({ prefix: "attack-rowskey-" });
  const fifo = join(dir, "fifo.key");
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success, "mkfifo");
  const sparse = join(dir, "sparse.key");
  {
    using file = await Deno.open(sparse, { write: true, create: true, mode: 0o600 });
    await file.truncate(8 * 1024 * 1024 * 1024);
  }
  const failed: string[] = [];
  for (
    const [name, path, why] of [["a FIFO", fifo, /FIFO/], [
      "a sparse 8 GiB file",
      sparse,
      /larger than/,
    ]] as const
  ) {
    const outcome = await beforeTimeout(readRowsKey(path).then(() => "read", (e: unknown) => e), 60_000);
    const stopped = outcome instanceof ProveviError && why.test(outcome.message) &&
      !outcome.message.includes("\n");
    keys.add(name, { stopped, recorded: true });
    if (!stopped) failed.push(`${name}: ${String(outcome).slice(0, 200)}`);
  }
  console.log(keys.line());
  await Deno.remove(sparse);
  assert.deepEqual(failed, []);
});

Deno.test("a received.spans record whose header claims more bytes than follow is waited for with a look, not read again at every take", async () => {
  const lying = new Tally("received.spans headers that lie about their length");
  const folder = await Deno.makeTempDir({ prefix: "attack-received-" });
  const path = join(folder, RECEIVED_FILE);
  const body = new TextEncoder().encode("{}");
  const header = new TextEncoder().encode(`${"a".repeat(64)} 900000000\n`);
  await Deno.writeFile(path, new Uint8Array([...header, ...packRecord(sha256Hex(body), body)]));
  // taken as the run's writer takes them (reads of at most 64 MiB)
  const taken = new ReceivedBodies(folder);
  let stored = 0;
  const store = () => Promise.resolve(String(++stored));
  await taken.take(store);
  // the record's end as its header says: the takes look at the file's length until it is there
  const waits = stored === 0 && taken.awaited === header.length + 900_000_000 + 1;
  lying.add("a header claiming 900 MB", { stopped: waits, recorded: true });
  // one bigger than a take reads is left to the seal, which reads the file to its end: the next takes store none
  await taken.take(store);
  lying.add("a record bigger than a take", {
    stopped: taken.awaited > 64 * 1024 * 1024 && stored === 0,
    recorded: true,
  });
  console.log(lying.line());
  await Deno.remove(folder, { recursive: true });
  assert.deepEqual(lying.missed, []);
});
