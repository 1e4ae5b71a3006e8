/**
 * Files an agent program leaves in its run folder, which provr reads after it: Codex's answer
 * (`.codex/last-message.txt`), its session rollouts (`.codex/sessions/…`), the files that hold its hooks
 * (`.codex/hook-headers`) and its outputs. The program is a stand-in that does what a compromised one could: it
 * puts a FIFO, a link to a file of the user's, a folder, or a sparse file of gigabytes where provr reads. Each was
 * read with `Deno.readFile`, `readTextFile` or `sha256File`: a FIFO held provr for ever (past the run's time
 * limit), a sparse rollout was read whole, a sparse output was hashed whole before its size failed the run, and a
 * link was followed. Each must now end the run failed in one line that names the file, with the evidence sealed
 * and verifying (but for what the verifier must name there), and no byte of the linked file in it. And a program
 * that writes a gigabyte to its standard output or error, which provr held whole (and more, to decode it), is
 * stopped past 64 MiB. And a program that knows the hash of a payload before it is stored (its own session
 * file's) and leaves a FIFO or a link at `evidence/payloads/<hash>`: the writer, finding the name taken, read
 * what was there to see whether it held the bytes, synchronously (a FIFO held all of provr), through the link.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { gitCatalog } from "../provrun/_catalog.ts";
import { beforeTimeout, measuredInChild, standInRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("program file attacks");
const CANARY = "canary-6d1f0c2e-user-secret";

/** The SHA-256 of the stand-in's rollout of 300 KiB, below. */
const PLANTED = "a85357cd70060e4c6a6d4308007a1378635fe6796e1f6c50b517f44105f77bd5";

/**
 * A session rollout of 300 KiB (a payload of its own file, past the pack's limit), and at the name its payload
 * will be stored at, `evidence/payloads/<its SHA-256>`, what `plant` makes (Python; `target` is that path).
 */
const PAYLOAD_PLANT = (plant: string) =>
  [
    `import hashlib`,
    `os.makedirs(home + "/sessions/2026", exist_ok=True)`,
    `body = (json.dumps({"type": "note", "text": "x" * 1000}) + "\\n").encode() * 300`,
    `open(home + "/sessions/2026/rollout.jsonl", "wb").write(body)`,
    `os.makedirs("evidence/payloads", exist_ok=True)`,
    `target = "evidence/payloads/" + hashlib.sha256(body).hexdigest()`,
    plant,
  ].join("\n");

/** What the stand-in does to its home before it exits (Python; `home` is `CODEX_HOME`, `secret` a user file). */
const ATTACKS: Record<string, { attack: string; error: RegExp; problems?: string[] }> = {
  "leaves a FIFO as its last message": {
    attack: `os.mkfifo(home + "/last-message.txt")`,
    error: /\.codex\/last-message\.txt .*it is a FIFO, not a regular file/,
  },
  "links its last message to a file of the user's": {
    attack: `os.symlink(secret, home + "/last-message.txt")`,
    error: /\.codex\/last-message\.txt .*it is a link, not a file/,
  },
  "leaves a folder as its last message": {
    attack: `os.mkdir(home + "/last-message.txt")`,
    error: /\.codex\/last-message\.txt .*it is a folder, not a regular file/,
  },
  "puts a FIFO in place of a file that holds its hooks": {
    attack: `os.remove(home + "/hook-headers"); os.mkfifo(home + "/hook-headers")`,
    error: /\.codex\/hook-headers was changed/,
  },
  "puts a link to a file of the user's in place of a file that holds its hooks": {
    attack: `os.remove(home + "/hook-headers"); os.symlink(secret, home + "/hook-headers")`,
    error: /\.codex\/hook-headers was changed/,
  },
  "leaves a FIFO in output/": {
    attack: `os.makedirs("output", exist_ok=True); os.mkfifo("output/report.md")`,
    error: /^output\/report\.md is a FIFO; a run's outputs are plain files/,
    // the verifier names it too, as it names a link there
    problems: ["output.not_plain output/report.md"],
  },
  "leaves a sparse output of 64 GiB beside a small one": {
    attack: [
      `os.makedirs("output", exist_ok=True); open("output/a.txt", "w").write("ok")`,
      `f = open("output/big.bin", "wb"); f.truncate(64 * 1024 ** 3); f.close()`,
    ].join("\n"),
    error: /^output\/big\.bin has 68719476736 bytes, past the limit/,
    // the small one is recorded; the one not read is there, unrecorded, as the run's failure says
    problems: ["output.unrecorded output/big.bin"],
  },
  "leaves a FIFO where its session file's payload is to be stored": {
    attack: PAYLOAD_PLANT("os.mkfifo(target)"),
    error: /^cannot store payload [0-9a-f]{64}: /,
    // the verifier names what the program left among the payloads
    problems: [`payload.unlisted payloads/${PLANTED}`],
  },
  "leaves a link to a copy of its session file where its payload is to be stored": {
    attack: PAYLOAD_PLANT(`open(secret, "wb").write(body); os.symlink(secret, target)`),
    error: /^cannot store payload [0-9a-f]{64}: /,
    // the verifier names what the program left among the payloads
    problems: [`payload.unlisted payloads/${PLANTED}`],
  },
  "leaves a sparse session rollout of 8 GiB": {
    attack: [
      `os.makedirs(home + "/sessions/2026", exist_ok=True)`,
      `f = open(home + "/sessions/2026/rollout.jsonl", "wb"); f.truncate(8 * 1024 ** 3); f.close()`,
    ].join("\n"),
    error: /\.codex\/sessions\/2026\/rollout\.jsonl .*it holds more than 268435456 bytes/,
  },
};

function standIn(attack: string, secret: string): string {
  return `#!/usr/bin/env python3
import json, os
home = os.environ["CODEX_HOME"]
secret = ${JSON.stringify(secret)}
${attack}
print("done")
`;
}

/** Files whose bytes hold the canary, under a folder (not following links). */
async function holdingCanary(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) found.push(...await holdingCanary(p));
    else if (e.isFile && (await Deno.stat(p)).size < 64 * 1024 * 1024) {
      if (new TextDecoder().decode(await Deno.readFile(p)).includes(CANARY)) found.push(p);
    }
  }
  return found;
}

for (const [name, { attack, error, problems = [] }] of Object.entries(ATTACKS)) {
  Deno.test({
    name: `a codex run whose program ${name} fails, named, sealed, without waiting`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "program-file-" });
      try {
        const secret = join(dir, "secret.txt");
        await Deno.writeTextFile(secret, `${CANARY}\n`);
        const program = join(dir, "fake-codex");
        await Deno.writeTextFile(program, standIn(attack, secret), { mode: 0o755 });
        const outcome = await beforeTimeout(standInRun(program, { runs: join(dir, "runs") }), 90_000);
        assert.notEqual(outcome, "timeout", "provr waited for ever on what the program left");
        if (outcome === "timeout") return;
        const message = outcome.error?.message ?? "";
        const stopped = outcome.status === "failed" && error.test(message) && !message.includes("\n");
        const leaked = await holdingCanary(join(dir, "runs"));
        const found = (await verifyRun(await findRun(outcome.folder))).problems.map((p) =>
          `${p.code} ${p.file}`
        );
        const recorded = leaked.length === 0 && JSON.stringify(found) === JSON.stringify(problems);
        tally.add(name, { stopped, recorded });
        assert.ok(stopped, JSON.stringify({ status: outcome.status, message }));
        assert.ok(recorded, JSON.stringify({ leaked, found }));
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

/** A stand-in that writes 1 GiB to one of its streams (Python; `stream` is `stdout` or `stderr`). */
const FLOOD = (stream: string) =>
  `#!/usr/bin/env python3
import sys
chunk = b"x" * (1 << 20)
for i in range(1024): sys.${stream}.buffer.write(chunk)
`;

for (const [stream, words] of [["stdout", "standard output"], ["stderr", "standard error"]]) {
  Deno.test({
    name: `a codex run whose program writes 1 GiB to its ${words} fails, named, sealed, in bounded memory`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "program-output-" });
      try {
        const program = join(dir, "fake-codex");
        await Deno.writeTextFile(program, FLOOD(stream!), { mode: 0o755 });
        // measured in a process of its own: this one's RSS counts what the files running beside it hold
        const { grew, got: outcome } = await measuredInChild<
          { status: string; message: string; folder: string }
        >(
          "./_program_file_work.ts",
          "run",
          program,
          join(dir, "runs"),
        );
        const message = outcome.message;
        const grown = grew / 2 ** 20;
        console.log(`the run: ${Math.round(grown)} MiB more memory`);
        // before the cap, provr held the whole gigabyte, and more while it decoded it
        const stopped = outcome.status === "failed" && grown < 512 &&
          new RegExp(`wrote more than 67108864 bytes to its ${words}`).test(message);
        const recorded = (await verifyRun(await findRun(outcome.folder))).ok;
        tally.add(`writes 1 GiB to its ${words}`, { stopped, recorded });
        assert.ok(stopped, JSON.stringify({ status: outcome.status, message, grownMiB: Math.round(grown) }));
        assert.ok(recorded);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

/** What the stand-in puts in place of its staged input (Python; the run folder is the current folder). */
const INPUT_ATTACKS: Record<string, string> = {
  "puts a FIFO in place of its input": `os.remove("input/revenue.csv"); os.mkfifo("input/revenue.csv")`,
  "puts a sparse file of 64 GiB in place of its input": [
    `os.remove("input/revenue.csv")`,
    `f = open("input/revenue.csv", "wb"); f.truncate(64 * 1024 ** 3); f.close()`,
  ].join("\n"),
};

for (const [name, attack] of Object.entries(INPUT_ATTACKS)) {
  Deno.test({
    name: `a codex run whose program ${name} fails, named, sealed, without waiting`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      await using t = await gitCatalog({ "finance/revenue.csv": "quarter,revenue\nQ3,48.2\n" });
      const program = join(t.root, "fake-codex");
      // the input folder is read-only, but the program runs as the user, who may change that
      await Deno.writeTextFile(
        program,
        `#!/usr/bin/env python3\nimport os\nos.chmod("input", 0o755)\n${attack}\n`,
        {
          mode: 0o755,
        },
      );
      // the sparse file was hashed with synchronous reads, which held this timer too: the test's own limit
      // then is the runner's
      const outcome = await beforeTimeout(
        standInRun(program, {
          catalog: t.catalog,
          runs: t.runs,
          inputs: ['{ uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }'],
        }),
        90_000,
      );
      assert.notEqual(
        outcome,
        "timeout",
        "provr waited for ever on what the program put in place of its input",
      );
      if (outcome === "timeout") return;
      const message = outcome.error?.message ?? "";
      const stopped = outcome.status === "failed" && outcome.error?.name === "InputChanged" &&
        /input revenue\.csv changed during the run/.test(message);
      const found = (await verifyRun(await findRun(outcome.folder))).problems.map((p) =>
        `${p.code} ${p.file}`
      );
      // the verifier names the input's check as failed, as for any input changed or removed during a run (one
      // that cannot be hashed again is recorded with data.sha256 "missing", as a removed one always was)
      const recorded = JSON.stringify(found) === JSON.stringify(["input.sha256 events.jsonl"]);
      tally.add(name, { stopped, recorded });
      assert.ok(stopped, JSON.stringify({ status: outcome.status, message }));
      assert.ok(recorded, JSON.stringify({ found }));
    },
  });
}

Deno.test({
  name: "program file attacks: the tally",
  fn: () => {
    console.log(tally.line());
    assert.equal(tally.missed.length, 0, tally.line());
  },
});
