import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { iterateOnce, preparedOnce } from "../../../lib/provevi/sqlite/_prepared.ts";

const SQL = "SELECT value FROM generate WHERE run = ? ORDER BY value";

function db(): DatabaseSync {
  const d = new DatabaseSync(":memory:");
  d.exec("CREATE TABLE generate (run TEXT, value INTEGER)");
  const insert = d.prepare("INSERT INTO generate VALUES (?, ?)");
  for (let i = 0; i < 5; i++) (insert.run("a", i), insert.run("b", 10 + i));
  return d;
}

Deno.test("two readings of one kept statement at once each get their rows: the second is not the first's statement", () => {
  const d = db();
  try {
    const a = iterateOnce(d, SQL, ["a"]);
    const got: number[] = [];
    got.push((a.next().value as { value: number }).value);
    // another run's reading and a whole read of the same text while the first is under way
    const b = [...iterateOnce(d, SQL, ["b"])].map((r) => r.value);
    const all = (preparedOnce(d, SQL).all("b") as { value: number }[]).map((r) => r.value);
    for (const r of a) got.push((r as { value: number }).value);
    assert.deepEqual(got, [0, 1, 2, 3, 4]);
    assert.deepEqual(b, [10, 11, 12, 13, 14]);
    assert.deepEqual(all, b);
    // once a reading ends, or stops part way, its statement is kept again
    const first = preparedOnce(d, SQL);
    for (const _ of iterateOnce(d, SQL, ["a"])) break;
    assert.equal(preparedOnce(d, SQL), first);
  } finally {
    d.close();
  }
});
