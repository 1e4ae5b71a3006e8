import assert from "node:assert/strict";
import { join } from "node:path";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { manifestText } from "../../../lib/provevi/evidence/manifest.ts";
import { verify, verifyOutputs } from "../../../lib/provevi/evidence/verify.ts";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import type { Manifest } from "../../../lib/provevi/evidence/manifest.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { SAMPLE_RUN_ID } from "../_sample_run.ts";
import { writeRun } from "../_run.ts";
import { copyFolder } from "../../_files.ts";

const FIXTURE = new URL(`../../../fixtures/runs/${SAMPLE_RUN_ID}`, import.meta.url).pathname;

/** A fresh copy of the fixture run, changed by `change`, then checked by verifyRun. */
async function tampered(change: (folder: string) => Promise<void>): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "provevi-tamper-" });
  const folder = join(dir, SAMPLE_RUN_ID);
  await copyFolder(FIXTURE, folder);
  await change(folder);
  const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder));
  await Deno.remove(dir, { recursive: true });
  assert.equal(check.ok, false, "the change must not verify");
  return check.problems.map((p) => p.message);
}

const events = (folder: string) => join(folder, "evidence", "events.jsonl");
const manifestPath = (folder: string) => join(folder, "evidence", "manifest.json");
const readLines = async (folder: string) => (await Deno.readTextFile(events(folder))).trimEnd().split("\n");
const writeLines = (folder: string, lines: string[]) =>
  Deno.writeTextFile(events(folder), lines.join("\n") + "\n");
const payloadOf = async (folder: string, seq: number) =>
  JSON.parse((await readLines(folder))[seq]!).payload as string;

const expectProblem = (problems: string[], pattern: RegExp) =>
  assert.ok(problems.some((p) => pattern.test(p)), `no problem matches ${pattern}:\n${problems.join("\n")}`);

Deno.test("verifyRun() passes the fixture run", async () => {
  const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, FIXTURE));
  assert.deepEqual(check, {
    ok: true,
    problems: [],
    notes: ["the run is not signed"],
    signedBy: [],
    runId: SAMPLE_RUN_ID,
    bundle: null,
    unpinnedBundle: null,
    inLog: null,
  });
});

Deno.test("verifyRun() reports a changed event by line and seq", async () => {
  const problems = await tampered(async (f) => {
    const lines = await readLines(f);
    lines[8] = lines[8]!.replace('"output_tokens":9', '"output_tokens":7');
    await writeLines(f, lines);
  });
  expectProblem(problems, /^events\.jsonl line 10 \(seq 9\) has prev [0-9a-f]{64}, but line 9 hashes to/);
});

Deno.test("verifyRun() reports a removed event", async () => {
  const problems = await tampered(async (f) => {
    const lines = await readLines(f);
    lines.splice(4, 1);
    await writeLines(f, lines);
  });
  expectProblem(problems, /^events\.jsonl line 5 \(seq 5\) is out of sequence: after seq 3 comes seq 4$/);
  expectProblem(problems, /manifest\.json counts 13 events, but events\.jsonl has 12 lines/);
});

Deno.test("verifyRun() reports an inserted event, even one chained correctly after it", async () => {
  const problems = await tampered(async (f) => {
    const lines = await readLines(f);
    const prev = JSON.parse(lines[5]!);
    const chain = new EventChain(SAMPLE_RUN_ID, { seq: 6, prev: sha256Hex(lines[5]!) });
    const extra = chain.next({ type: "note_added", component: "agent", actor: prev.actor, time: prev.time });
    lines.splice(6, 0, extra.line);
    await writeLines(f, lines);
  });
  expectProblem(problems, /line 8 \(seq 6\) is out of sequence: after seq 6 comes seq 7/);
  expectProblem(problems, /line 8 \(seq 6\) has prev/);
});

Deno.test("verifyRun() reports reordered events", async () => {
  const problems = await tampered(async (f) => {
    const lines = await readLines(f);
    [lines[2], lines[3]] = [lines[3]!, lines[2]!];
    await writeLines(f, lines);
  });
  expectProblem(problems, /line 3 \(seq 3\) is out of sequence: after seq 1 comes seq 2/);
  expectProblem(problems, /line 4 \(seq 2\) is out of sequence: after seq 3 comes seq 4/);
});

Deno.test("verifyRun() reports a truncated events file", async () => {
  const problems = await tampered(async (f) => {
    const text = await Deno.readTextFile(events(f));
    await Deno.writeTextFile(events(f), text.slice(0, text.length - 40));
  });
  expectProblem(problems, /line 13 has no newline at its end: the file was cut/);
  const cleanCut = await tampered(async (f) => writeLines(f, (await readLines(f)).slice(0, 10)));
  expectProblem(
    cleanCut,
    /manifest\.json has last_hash [0-9a-f]{64}, but the last line of events\.jsonl hashes to/,
  );
  expectProblem(cleanCut, /manifest\.json has status completed, but the events end as incomplete/);
});

Deno.test("verifyRun() reports a line that is not JSON, and one that is not an event", async () => {
  const problems = await tampered(async (f) => {
    const lines = await readLines(f);
    lines[1] = "{not json";
    lines[2] = JSON.stringify({ hello: "world" });
    await writeLines(f, lines);
  });
  expectProblem(problems, /^events\.jsonl line 2 is not JSON$/);
  expectProblem(
    problems,
    /^events\.jsonl line 3 \(seq unreadable\) is not an event: has an unknown field "hello"; lacks the fields run_id,/,
  );
});

Deno.test("verifyRun() reports a line that is not in canonical form", async () => {
  const problems = await tampered(async (f) => {
    const lines = await readLines(f);
    lines[12] = JSON.stringify(JSON.parse(lines[12]!), null, 1).replaceAll("\n", "");
    await writeLines(f, lines);
  });
  expectProblem(problems, /line 13 \(seq 12\) is not in RFC 8785 canonical form/);
});

Deno.test("verifyRun() reports a changed payload", async () => {
  const problems = await tampered(async (f) => {
    await Deno.writeTextFile(join(f, "evidence", "payloads", await payloadOf(f, 7)), "another prompt");
  });
  expectProblem(problems, /^payloads\/[0-9a-f]{64} was changed: its bytes hash to [0-9a-f]{64}$/);
});

Deno.test("verifyRun() reports a missing payload", async () => {
  const problems = await tampered(async (f) => {
    await Deno.remove(join(f, "evidence", "payloads", await payloadOf(f, 8)));
  });
  expectProblem(problems, /^payloads\/[0-9a-f]{64} is missing$/);
});

Deno.test("verifyRun() reports an extra payload", async () => {
  const sha = sha256Hex("extra");
  const problems = await tampered((f) => Deno.writeTextFile(join(f, "evidence", "payloads", sha), "extra"));
  assert.ok(problems.includes(`payloads/${sha} is not in the manifest's payload list`), problems.join("\n"));
});

Deno.test("verifyRun() reports a changed last hash in the manifest", async () => {
  const problems = await tampered(async (f) => {
    const m = JSON.parse(await Deno.readTextFile(manifestPath(f))) as Manifest;
    m.last_hash = sha256Hex("forged");
    await Deno.writeTextFile(manifestPath(f), manifestText(m));
  });
  expectProblem(problems, new RegExp(`manifest\\.json has last_hash ${sha256Hex("forged")}`));
});

Deno.test("verifyRun() reports a changed payload list in the manifest", async () => {
  const problems = await tampered(async (f) => {
    const m = JSON.parse(await Deno.readTextFile(manifestPath(f))) as Manifest;
    const dropped = m.payloads.shift()!;
    m.payload_bytes -= dropped.size;
    await Deno.writeTextFile(manifestPath(f), manifestText(m));
  });
  expectProblem(problems, /is not in the manifest's payload list/);
  expectProblem(problems, /names payload [0-9a-f]{64}, which the manifest does not list/);
});

Deno.test("verifyRun() reports a manifest that is not JSON, and a missing manifest", async () => {
  expectProblem(
    await tampered((f) => Deno.writeTextFile(manifestPath(f), "{")),
    /^manifest\.json is not JSON$/,
  );
  expectProblem(
    await tampered((f) => Deno.remove(manifestPath(f))),
    /manifest\.json is missing: the run was not sealed/,
  );
  expectProblem(await tampered((f) => Deno.remove(events(f))), /events\.jsonl is missing/);
});

Deno.test("verifyRun() reports a changed, missing or extra output", async () => {
  const out = (f: string, name = "answer.txt") => join(f, "output", name);
  expectProblem(
    await tampered((f) => Deno.writeTextFile(out(f), "Revenue fell.\n")),
    /^output\/answer\.txt was changed: it hashes to/,
  );
  expectProblem(await tampered((f) => Deno.remove(out(f))), /^output\/answer\.txt is recorded but missing$/);
  expectProblem(
    await tampered((f) => Deno.writeTextFile(out(f, "extra.txt"), "x")),
    /^output\/extra\.txt is not a recorded output$/,
  );
});

Deno.test("verifyOutputs() passes a run with no output folder and no outputs", async () => {
  const dir = await Deno.makeTempDir();
  assert.deepEqual(await verifyOutputs(dir, []), { ok: true, problems: [] });
  await Deno.remove(dir);
});

Deno.test("verifyRun() reports a bundle.json that is not JSON, and a missing bundle when one is required", async () => {
  expectProblem(
    await tampered((f) => Deno.writeTextFile(join(f, "bundle.json"), "nope")),
    /^bundle\.json cannot be read/,
  );
  const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, FIXTURE), { requireBundle: true });
  assert.deepEqual(check.problems.map((p) => p.message), [
    "no committed bundle to compare with, and a bundle is required",
  ]);
});

Deno.test("verify() reports an input that changed during the run only through verifyRun's input check", async () => {
  const problems = await tampered(async (f) => {
    // Rewrite the run so that input_verified says the input changed, with a valid chain and manifest.
    const lines = await readLines(f);
    const chain = new EventChain(SAMPLE_RUN_ID);
    const out: string[] = [];
    for (const line of lines) {
      const e = JSON.parse(line);
      if (e.type === "input_verified") e.data.ok = false;
      const next = chain.next(e);
      chain.accept(next);
      out.push(next.line);
    }
    await writeLines(f, out);
    const m = JSON.parse(await Deno.readTextFile(manifestPath(f))) as Manifest;
    m.last_hash = chain.lastHash;
    await Deno.writeTextFile(manifestPath(f), manifestText(m));
    assert.ok((await verify(new FileRunRecord(SAMPLE_RUN_ID, f))).ok);
  });
  expectProblem(
    problems,
    /^events\.jsonl line 11 \(seq 10, input_verified\) has data\.ok false, but the input hashed to [0-9a-f]{64} at the end and was staged as [0-9a-f]{64}$/,
  );
});

Deno.test("verifyRun() reports a manifest of null, which would hide a run cut at its end", async () => {
  const problems = await tampered(async (f) => {
    const lines = await readLines(f);
    await writeLines(f, lines.slice(0, -1));
    await Deno.writeTextFile(manifestPath(f), "null\n");
  });
  expectProblem(problems, /^manifest\.json is not a JSON object$/);
  for (const text of ["[]\n", "5\n", '"x"\n']) {
    expectProblem(await tampered((f) => Deno.writeTextFile(manifestPath(f), text)), /is not a JSON object$/);
  }
});

Deno.test("verifyRun() reports a manifest that lists a payload twice, or out of order", async () => {
  const rewrite = (change: (m: Manifest) => void) => async (f: string) => {
    const m = JSON.parse(await Deno.readTextFile(manifestPath(f))) as Manifest;
    change(m);
    m.payload_bytes = m.payloads.reduce((n, p) => n + p.size, 0);
    await Deno.writeTextFile(manifestPath(f), JSON.stringify(m));
  };
  expectProblem(
    await tampered(rewrite((m) => m.payloads.push({ ...m.payloads[m.payloads.length - 1]! }))),
    /^manifest\.json lists payload [0-9a-f]{64} twice$/,
  );
  expectProblem(
    await tampered(rewrite((m) => m.payloads.reverse())),
    /^manifest\.json payloads\[1\] is out of order/,
  );
});

Deno.test("verifyRun() reports a manifest with an unknown field, a bad seal time or a malformed loss", async () => {
  const rewrite = (change: (m: Record<string, unknown>) => void) => async (f: string) => {
    const m = JSON.parse(await Deno.readTextFile(manifestPath(f)));
    change(m);
    await Deno.writeTextFile(manifestPath(f), JSON.stringify(m));
  };
  expectProblem(await tampered(rewrite((m) => m.note = "x")), /^manifest\.json has an unknown field "note"$/);
  expectProblem(await tampered(rewrite((m) => m.sealed_at = 5)), /^manifest\.json has sealed_at 5, not a/);
  expectProblem(
    await tampered(rewrite((m) => m.lost = [null])),
    /^manifest\.json lost\[0\] is not exactly a type, a UTC time and an error$/,
  );
});

Deno.test("verifyRun() reports a byte that is not UTF-8, though it decodes to a character of the line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-utf8-" });
  try {
    // A note holds U+FFFD; a non-fatal decoder turns the byte 0xff into that same character, so the chain would
    // hash the note as written while the file holds another byte.
    const folder = await writeRun(join(dir, SAMPLE_RUN_ID), SAMPLE_RUN_ID, { note: "bad \uFFFD byte" });
    assert.ok((await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder))).ok);
    const bytes = await Deno.readFile(events(folder));
    const at = bytes.findIndex((b, i) => b === 0xef && bytes[i + 1] === 0xbf && bytes[i + 2] === 0xbd);
    await Deno.writeFile(
      events(folder),
      new Uint8Array([...bytes.subarray(0, at), 0xff, ...bytes.subarray(at + 3)]),
    );
    const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder));
    assert.equal(check.ok, false);
    assert.deepEqual(check.problems.map((p) => p.message), [
      "events.jsonl line 3 is not valid UTF-8, so its text is not the bytes that were hashed",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("verifyRun() reports links in the evidence and as output/, rather than following them", async () => {
  const away = await Deno.makeTempDir({ prefix: "provevi-away-" });
  const moveAndLink = (path: string) => async () => {
    const target = join(away, crypto.randomUUID());
    await Deno.rename(path, target);
    await Deno.symlink(target, path);
  };
  const evidence = (f: string) => join(f, "evidence");
  const payloads = (f: string) => join(f, "evidence", "payloads");
  try {
    expectProblem(
      await tampered((f) => moveAndLink(join(f, "output"))()),
      /^output\/ is a link, not a folder$/,
    );
    expectProblem(await tampered((f) => moveAndLink(evidence(f))()), /evidence is a link, not a folder/);
    expectProblem(await tampered((f) => moveAndLink(payloads(f))()), /payloads is a link, not a folder/);
    expectProblem(
      await tampered((f) => moveAndLink(manifestPath(f))()),
      /manifest\.json is a link, not a file/,
    );
    expectProblem(
      await tampered(async (f) => await moveAndLink(join(payloads(f), await payloadOf(f, 7)))()),
      /^payloads\/[0-9a-f]{64} cannot be read: .* is a link, not a file$/,
    );
  } finally {
    await Deno.remove(away, { recursive: true });
  }
});

Deno.test("verifyRun() reports a named pipe as an output or a payload, and does not wait on it", async () => {
  const mkfifo = (path: string) => new Deno.Command("mkfifo", { args: [path] }).output();
  expectProblem(
    await tampered(async (f) => {
      await Deno.remove(join(f, "output", "answer.txt"));
      await mkfifo(join(f, "output", "answer.txt"));
    }),
    /^output\/answer\.txt is not a plain file$/,
  );
  expectProblem(
    await tampered(async (f) => {
      const payload = join(f, "evidence", "payloads", await payloadOf(f, 7));
      await Deno.remove(payload);
      await mkfifo(payload);
    }),
    /^payloads\/[0-9a-f]{64} cannot be read: .* is not a plain file$/,
  );
  expectProblem(
    await tampered(async (f) => {
      await Deno.remove(events(f));
      await mkfifo(events(f));
    }),
    /events\.jsonl is not a plain file/,
  );
});

Deno.test("verifyRun() reports events after the run's end, two ends, and a first event that is not run_created", async () => {
  const rechain = async (
    f: string,
    change: (events: Record<string, unknown>[]) => Record<string, unknown>[],
  ) => {
    const chain = new EventChain(SAMPLE_RUN_ID);
    const out: string[] = [];
    for (const e of change((await readLines(f)).map((l) => JSON.parse(l)))) {
      const next = chain.next(e as never);
      chain.accept(next);
      out.push(next.line);
    }
    await writeLines(f, out);
    const m = JSON.parse(await Deno.readTextFile(manifestPath(f))) as Manifest;
    m.last_hash = chain.lastHash;
    m.events = out.length;
    await Deno.writeTextFile(manifestPath(f), manifestText(m));
  };
  const after = await tampered((f) =>
    rechain(f, (es) => [...es, { ...es[7]!, type: "note_added", data: { text: "late" } }])
  );
  expectProblem(
    after,
    /^events\.jsonl line 14 \(seq 13\) follows the run's end: line 13 \(seq 12\) ends the run with run_completed, and 1 line\(s\) follow it, to line 14$/,
  );
  const twice = await tampered((f) => rechain(f, (es) => [...es.slice(0, 12), es[12]!, es[12]!]));
  expectProblem(twice, /^events\.jsonl lines 13, 14 \(seq 12, 13\) each end the run: a run ends once$/);
  const first = await tampered((f) => rechain(f, (es) => es.slice(1)));
  expectProblem(
    first,
    /^events\.jsonl line 1 \(seq 0\) is access_requested: the first event must be run_created$/,
  );
});

Deno.test("verifyRun() reports a manifest that is not in canonical form", async () => {
  const problems = await tampered(async (f) => {
    const m = JSON.parse(await Deno.readTextFile(manifestPath(f)));
    await Deno.writeTextFile(manifestPath(f), JSON.stringify(m, null, 2) + "\n");
  });
  assert.deepEqual(problems, ["manifest.json is not in RFC 8785 canonical form with one newline at its end"]);
});
