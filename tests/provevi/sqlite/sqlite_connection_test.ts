import assert from "node:assert/strict";
import { retryBusy } from "../../../lib/provevi/sqlite/sqlite_connection.ts";

const sleeper = new Int32Array(new SharedArrayBuffer(4));

Deno.test("retryBusy() stops once the busy timeout has passed in all, not after 20 busy timeouts", () => {
  let calls = 0;
  const started = performance.now();
  assert.throws(
    () =>
      retryBusy(() => {
        calls++;
        Atomics.wait(sleeper, 0, 0, 50); // as SQLite's busy handler waits inside each attempt
        throw new Error("database is locked");
      }, { timeoutMs: 200 }),
    /database is locked/,
  );
  assert.ok(calls <= 5, `${calls} attempts`);
  // 20 busy timeouts would take 4 s; one, 200 ms: the limit is generous for a busy machine.
  assert.ok(performance.now() - started < 3_000);
});

Deno.test("retryBusy() retries a busy error and passes any other at once", () => {
  let calls = 0;
  assert.equal(
    retryBusy(() => {
      if (++calls < 3) throw new Error("database is locked");
      return "done";
    }),
    "done",
  );
  calls = 0;
  assert.throws(() => retryBusy(() => (calls++, JSON.parse("{"))), SyntaxError);
  assert.equal(calls, 1);
});
