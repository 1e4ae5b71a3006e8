import assert from "node:assert/strict";
import { join } from "node:path";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { readTrustedKey } from "../../../lib/provevi/evidence/signing_key.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { bufferIo } from "../../../cli/_io.ts";
import { prove } from "../../../cli/prove.ts";
import { provr } from "../../../cli/provr.ts";

const RUN_FILE = `
run: { org: acme, domain: demo, env: dev, actor: ada, sign_key: signing.key }
agent:
  name: q
  backend: call
  model: "test:"
  script:
    model: answer-1
    turns:
      - text: "Revenue grew 12% in Q3."
        usage: { input: 14, output: 9 }
prompt: What was the revenue growth?
`;

Deno.test("a run file's sign_key signs the seal; the run records the key's ID and verifies with --trust", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const keys = bufferIo();
    assert.equal(await prove(["keygen", join(dir, "signing.key")], keys), 0, keys.text());
    const keyid = (await readTrustedKey(join(dir, "signing.key.pub"))).keyid;
    assert.match(keys.text(), new RegExp(`^${keyid}: private key `));
    await Deno.writeTextFile(join(dir, "run.yaml"), RUN_FILE);
    const outcome = await runFile(await RunFile.load(join(dir, "run.yaml")), { runs: join(dir, "runs") });
    assert.equal(outcome.status, "completed");
    const record = new FileRunRecord(outcome.runId, outcome.folder);
    const created = readEventsText((await record.eventsText())!).events[0]!;
    assert.equal(created.data.signing_key, keyid);
    assert.equal(created.data.bundle, false);
    const check = await verifyRun(record, { trust: [await readTrustedKey(join(dir, "signing.key.pub"))] });
    assert.deepEqual([check.ok, check.problems.map((p) => p.message), check.signedBy], [true, [], [keyid]]);
    const io = bufferIo();
    const code = await prove(
      ["--runs", join(dir, "runs"), "verify", outcome.runId, "--trust", join(dir, "signing.key.pub")],
      io,
    );
    assert.equal(code, 0, io.text());
    assert.match(
      io.text(),
      new RegExp(`the evidence and the outputs verify, signed by trusted key ${keyid}`),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("provr run --sign-key signs with the key it names; a key others may read fails before the run", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await prove(["keygen", join(dir, "other.key")], bufferIo());
    await Deno.writeTextFile(join(dir, "run.yaml"), RUN_FILE.replace(", sign_key: signing.key", ""));
    const io = bufferIo();
    const runs = join(dir, "runs");
    assert.equal(
      await provr(["--runs", runs, "run", join(dir, "run.yaml"), "--sign-key", join(dir, "other.key")], io),
      0,
      io.text(),
    );
    const runId = io.stdout.join("").trim();
    const verified = bufferIo();
    assert.equal(
      await prove(["--runs", runs, "verify", runId, "--trust", join(dir, "other.key.pub")], verified),
      0,
    );
    await Deno.chmod(join(dir, "other.key"), 0o640);
    const refused = bufferIo();
    assert.equal(
      await provr(
        ["--runs", runs, "run", join(dir, "run.yaml"), "--sign-key", join(dir, "other.key")],
        refused,
      ),
      1,
    );
    assert.match(refused.stderr.join("\n"), /may be read by others \(mode 640\); run chmod 600/);
    assert.equal(
      [...Deno.readDirSync(runs)].filter((e) => !e.name.startsWith(".")).length,
      1,
      "no run folder for the refused run (.log/ is the store's log)",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a signed run copied into a sqlite store and back keeps its signature, and verifies with --trust there", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await prove(["keygen", join(dir, "signing.key")], bufferIo());
    await Deno.writeTextFile(join(dir, "run.yaml"), RUN_FILE);
    const outcome = await runFile(await RunFile.load(join(dir, "run.yaml")), { runs: join(dir, "runs") });
    const trust = ["--trust", join(dir, "signing.key.pub")];
    const db = `sqlite:///${join(dir, "evidence.db")}`;
    const copy = bufferIo();
    assert.equal(
      await prove(
        ["--runs", join(dir, "runs"), "export", outcome.runId, "--to", db, "--to-runs", join(dir, "indexed")],
        copy,
      ),
      0,
      copy.text(),
    );
    const there = bufferIo();
    assert.equal(await prove(["--store", db, "verify", outcome.runId, ...trust], there), 0, there.text());
    assert.match(there.text(), /signed by trusted key/);
    const back = bufferIo();
    assert.equal(
      await prove(
        ["--store", db, "export", outcome.runId, "--to", "file", "--to-runs", join(dir, "back")],
        back,
      ),
      0,
      back.text(),
    );
    const home = bufferIo();
    assert.equal(
      await prove(["--runs", join(dir, "back"), "verify", outcome.runId, ...trust], home),
      0,
      home.text(),
    );
    assert.equal(
      await Deno.readTextFile(join(dir, "back", outcome.runId, "evidence", "attestation.dsse.json")),
      await Deno.readTextFile(join(outcome.folder, "evidence", "attestation.dsse.json")),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
