import assert from "node:assert/strict";
import { join } from "node:path";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { isUtcTime } from "../../../lib/provevi/evidence/event.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { showRun } from "../../../cli/_commands.ts";
import { SAMPLE_RUN_ID } from "../_sample_run.ts";
import { eventsPath, fixtureCopy, rechain } from "../_tamper.ts";

/** Verifies a changed copy of the fixture run and gives its problems. */
async function problemsOf(change: (folder: string) => Promise<void>): Promise<string[]> {
  const { dir, folder } = await fixtureCopy();
  try {
    await change(folder);
    const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder));
    assert.equal(check.ok, false, "the change must not verify");
    return check.problems.map((p) => p.message);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

type Ev = Record<string, unknown> & { data: Record<string, unknown> };
const edit = (seq: number, change: (e: Ev) => void) => (f: string) =>
  rechain(f, (es) => {
    change(es[seq] as Ev);
    return es;
  });

Deno.test("isUtcTime() refuses dates and hours that do not exist", () => {
  for (const t of ["2026-02-28T23:59:59Z", "2024-02-29T00:00:00.123456Z", "2026-12-31T00:00:00.1Z"]) {
    assert.ok(isUtcTime(t), t);
  }
  for (
    const t of [
      "2026-02-30T12:00:00Z",
      "2026-02-29T12:00:00Z",
      "1900-02-29T12:00:00Z",
      "2026-04-31T12:00:00Z",
      "2026-00-10T12:00:00Z",
      "2026-13-10T12:00:00Z",
      "2026-01-00T12:00:00Z",
      "2026-01-10T25:00:00Z",
      "2026-01-10T24:00:00Z",
      "2026-01-10T12:60:00Z",
      "2026-01-10T12:00:60Z",
      "2026-01-10T12:00:00+00:00",
      "2026-01-10T12:00:00.Z",
      5,
    ]
  ) assert.ok(!isUtcTime(t), String(t));
});

Deno.test("verifyRun() reports a time or a started_at that is no real time, by line and seq", async () => {
  assert.deepEqual(await problemsOf(edit(3, (e) => e.time = "2026-02-30T12:00:00.000000Z")), [
    "events.jsonl line 4 (seq 3) is not an event: time is not a real UTC RFC 3339 time",
  ]);
  assert.deepEqual(await problemsOf(edit(8, (e) => e.started_at = "2026-11-29T25:00:00.000000Z")), [
    "events.jsonl line 9 (seq 8) is not an event: started_at is neither null nor a real UTC RFC 3339 time",
  ]);
});

Deno.test("verifyRun() reports a lone surrogate by line and seq, and prove show still shows the run", async () => {
  const { dir, folder } = await fixtureCopy();
  try {
    await rechain(folder, (es) => {
      (es[12] as Ev).data.status = "SURROGATE";
      return es;
    }, { patch: (line) => line.replace("SURROGATE", "\\ud800") });
    const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder));
    assert.deepEqual(check.problems.map((p) => p.message), [
      "events.jsonl line 13 (seq 12) holds a lone surrogate (an escape such as \\ud800 without its pair), which has no UTF-8 form and no RFC 8785 form",
    ]);
    const out: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => out.push(t) };
    await showRun(new FileRunRecord(SAMPLE_RUN_ID, folder), io as never, { json: true });
    assert.equal(JSON.parse(out.join("\n")).events.length, 13);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("verifyRun() recomputes input_verified: ok missing, a text, or true over a changed hash", async () => {
  const other = "0".repeat(64);
  const where = "events.jsonl line 11 (seq 10, input_verified)";
  assert.deepEqual(await problemsOf(edit(10, (e) => delete e.data.ok)), [
    `${where} has data.ok missing, not true or false`,
  ]);
  assert.deepEqual(await problemsOf(edit(10, (e) => e.data.ok = "false")), [
    `${where} has data.ok "false", not true or false`,
  ]);
  const changed = await problemsOf(edit(10, (e) => e.data.sha256 = other));
  assert.deepEqual(changed, [
    `${where} has data.ok true, but the input hashed to ${other} at the end and was staged as b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c`,
    `${where}: input "revenue.csv" changed during the run`,
  ]);
  assert.deepEqual(await problemsOf(edit(10, (e) => e.data.expected = other)), [
    `${where} has data.expected "${other}", but the input was staged as b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c`,
  ]);
  assert.deepEqual(await problemsOf(edit(10, (e) => e.data.name = "other.csv")), [
    `${where} names input "other.csv", which no earlier input_staged staged`,
  ]);
});

Deno.test("verifyRun() reports an unknown event type and a payload key that is not a SHA-256", async () => {
  assert.deepEqual(await problemsOf(edit(7, (e) => e.type = "prompt_whispered")), [
    'events.jsonl line 8 (seq 7, prompt_whispered) has an unknown type "prompt_whispered": the event types are those of docs/evidence-format.md',
  ]);
  assert.deepEqual(await problemsOf(edit(8, (e) => e.data.response_payload = 7)), [
    "events.jsonl line 9 (seq 8, model_called) has data.response_payload 7, which is neither null nor a SHA-256",
  ]);
  // null is a payload key's value for a call that has no result (a refused tool call).
  const { dir, folder } = await fixtureCopy();
  try {
    await edit(8, (e) => e.data.result_payload = null)(folder);
    assert.deepEqual(
      (await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder))).problems.map((p) => p.message),
      [],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("verifyRun() reports an output event whose path leaves output/", async () => {
  const problems = await problemsOf(edit(11, (e) => e.data.path = "../evidence/manifest.json"));
  assert.ok(
    problems.includes(
      'events.jsonl line 12 (seq 11, output_artifact_created) has data.path "../evidence/manifest.json", not a relative path under output/',
    ),
    problems.join("\n"),
  );
});

Deno.test("verifyRun() lists causes, not knock-on effects: no 'not a recorded output' after an unreadable line", async () => {
  const bytes = async (f: string, change: (b: Uint8Array) => Uint8Array) =>
    await Deno.writeFile(eventsPath(f), change(await Deno.readFile(eventsPath(f))));
  // A byte that is not UTF-8 in the line that records the output.
  const utf8 = await problemsOf((f) =>
    bytes(f, (b) => {
      const at = new TextDecoder().decode(b).indexOf("answer.txt");
      const out = b.slice();
      out[at] = 0xff;
      return out;
    })
  );
  assert.deepEqual(utf8, [
    "events.jsonl line 12 is not valid UTF-8, so its text is not the bytes that were hashed",
  ]);
  // events.jsonl as a link.
  const away = await Deno.makeTempDir();
  try {
    const linked = await problemsOf(async (f) => {
      await Deno.rename(eventsPath(f), join(away, "events.jsonl"));
      await Deno.symlink(join(away, "events.jsonl"), eventsPath(f));
    });
    assert.equal(linked.length, 1, linked.join("\n"));
    assert.match(linked[0]!, /events\.jsonl is a link, not a file$/);
  } finally {
    await Deno.remove(away, { recursive: true });
  }
});

Deno.test("isUtcTime() takes exactly the days the calendar has, in leap years and not", () => {
  const two = (n: number) => String(n).padStart(2, "0");
  for (const year of [1900, 2000, 2023, 2024, 2026, 2100, 2400]) {
    for (let month = 0; month <= 13; month++) {
      for (let day = 0; day <= 32; day++) {
        const date = new Date(Date.UTC(year, month - 1, day));
        const real = month >= 1 && month <= 12 && day >= 1 && date.getUTCMonth() === month - 1 &&
          date.getUTCDate() === day;
        const text = `${year}-${two(month)}-${two(day)}T23:59:59.999999Z`;
        assert.equal(isUtcTime(text), real, text);
      }
    }
  }
  for (
    const t of [
      "2026-01-10T23:60:00Z",
      "2026-01-10T23:00:60Z",
      "2026-01-10T12:00:00",
      "2026-01-10T12:00:00.Z",
    ]
  ) {
    assert.equal(isUtcTime(t), false, t);
  }
});
