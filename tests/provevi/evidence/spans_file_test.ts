import assert from "node:assert/strict";
import { join } from "node:path";
import { EvidenceError } from "../../../lib/provevi/evidence/errors.ts";
import {
  appendSpansFile,
  readSpansFile,
  SPANS_FILE,
  SpansFile,
  type StoredSpan,
} from "../../../lib/provevi/evidence/spans_file.ts";

function span(n: number): StoredSpan {
  return {
    trace_id: "cd".repeat(16),
    span_id: n.toString(16).padStart(16, "0"),
    parent_span_id: n > 1 ? "0000000000000001" : null,
    name: `span ${n} \u2603`,
    kind: 1,
    scope: { name: "s", version: "1" },
    start_time: "2026-11-30T12:00:00.000001Z",
    end_time: "2026-11-30T12:00:00.000002Z",
    status: { code: 2, message: "x\ny" },
    attributes: { n, "a\u2028b": [1, "two", true] },
    events: [{ name: "e", time: "2026-11-30T12:00:00.000001Z", attributes: {} }],
    links: [{ trace_id: "ef".repeat(16), span_id: "0000000000000009" }],
  };
}

Deno.test("SpansFile appends the bytes appendSpansFile writes: one JSON object a line, batch after batch", async () => {
  const kept = await Deno.makeTempDir();
  const once = await Deno.makeTempDir();
  const file = new SpansFile(kept);
  for (const batch of [[span(1), span(2)], [], [span(3)]]) {
    file.append(batch);
    await appendSpansFile(once, batch);
  }
  file.close();
  const bytes = await Deno.readFile(join(kept, SPANS_FILE));
  assert.deepEqual(bytes, await Deno.readFile(join(once, SPANS_FILE)));
  assert.equal(
    new TextDecoder().decode(bytes),
    [1, 2, 3].map((n) => JSON.stringify(span(n)) + "\n").join(""),
  );
  assert.deepEqual(await readSpansFile(kept), [span(1), span(2), span(3)]);
  await Deno.remove(kept, { recursive: true });
  await Deno.remove(once, { recursive: true });
});

Deno.test("SpansFile makes no file for no spans, and writes after its close with the file opened for the write", async () => {
  const folder = await Deno.makeTempDir();
  const file = new SpansFile(folder);
  file.append([]);
  await assert.rejects(() => Deno.stat(join(folder, SPANS_FILE)), Deno.errors.NotFound);
  file.append([span(1)]);
  file.close();
  file.close();
  file.append([span(2)]);
  assert.deepEqual((await readSpansFile(folder)).map((s) => s.name), ["span 1 \u2603", "span 2 \u2603"]);
  await Deno.remove(folder, { recursive: true });
});

Deno.test("SpansFile and appendSpansFile refuse a folder that cannot take the file with an EvidenceError that names it", async () => {
  const missing = join(await Deno.makeTempDir(), "gone");
  assert.throws(() => new SpansFile(missing).append([span(1)]), (e: unknown) => {
    assert.ok(e instanceof EvidenceError);
    assert.match(e.message, /^cannot write to .*gone\/spans\.jsonl: /);
    assert.ok(e.cause instanceof Deno.errors.NotFound);
    return true;
  });
  await assert.rejects(() => appendSpansFile(missing, [span(1)]), EvidenceError);
});
