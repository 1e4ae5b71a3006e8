/**
 * The gateway's one timer for all its calls' waits (`call_watch.ts`): each call is cut at its own deadline (the
 * wait for the answer, then for each next chunk), one that keeps sending is not, and the gateway's close ends
 * every call under way and any later one, and leaves no timer behind (Deno's test sanitizer fails a test that
 * leaves one).
 */
import assert from "node:assert/strict";
import { CallWatch, Silence } from "../../../lib/provrun/gateway/call_watch.ts";

/** The reason a controller is aborted with, or "not aborted" when that has not come within `ms` (generous). */
async function abortOf(controller: AbortController, ms: number): Promise<unknown> {
  if (controller.signal.aborted) return controller.signal.reason;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise((resolve) => (timer = setTimeout(() => resolve("not aborted"), ms)));
  const aborted = new Promise((resolve) =>
    controller.signal.addEventListener("abort", () => resolve(controller.signal.reason), { once: true })
  );
  try {
    return await Promise.race([aborted, late]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("a call whose wait for more is shorter than the wait armed for another call's answer is cut at its own deadline", async () => {
  const watch = new CallWatch();
  try {
    // the first call arms the timer for its answer, a minute away
    const waiting = new AbortController();
    watch.start({ controller: waiting, firstByteMs: 60_000, idleMs: 60_000 });
    // the second got its answer's headers, then the provider went silent: its wait for more is 50 ms
    const silent = new AbortController();
    watch.start({ controller: silent, firstByteMs: 60_000, idleMs: 50 }).touch();
    const reason = await abortOf(silent, 20_000);
    assert.ok(reason instanceof Silence, String(reason));
    assert.equal(reason.name, "ProviderTimeout");
    assert.match(reason.message, /^the provider sent nothing more for 0 s; the gateway stopped waiting$/);
    assert.equal(waiting.signal.aborted, false, "the call that waits for its answer goes on");
  } finally {
    watch.close();
  }
});

Deno.test("a provider that never answers is cut after the wait for the answer, with what it sent named", async () => {
  const watch = new CallWatch();
  try {
    const controller = new AbortController();
    watch.start({ controller, firstByteMs: 50, idleMs: 60_000 });
    const reason = await abortOf(controller, 20_000);
    assert.ok(reason instanceof Silence);
    assert.match(reason.message, /^the provider sent no answer for 0 s/);
  } finally {
    watch.close();
  }
});

Deno.test("a call that keeps sending within its wait is never cut, and one that stopped waiting is forgotten", async () => {
  const watch = new CallWatch();
  try {
    const sending = new AbortController();
    const wait = watch.start({ controller: sending, firstByteMs: 300, idleMs: 300 });
    const done = new AbortController();
    watch.start({ controller: done, firstByteMs: 100, idleMs: 100 }).stop();
    for (let i = 0; i < 12; i++) {
      await new Promise((r) => setTimeout(r, 50));
      wait.touch();
    }
    assert.equal(sending.signal.aborted, false, "600 ms of chunks 50 ms apart, each within the 300 ms wait");
    assert.equal(done.signal.aborted, false, "a call whose answer was read is not cut later");
  } finally {
    watch.close();
  }
});

Deno.test("closing ends every call under way and any call after it, and stops the timer", async () => {
  const watch = new CallWatch();
  const calls = Array.from({ length: 3 }, () => new AbortController());
  for (const controller of calls) watch.start({ controller, firstByteMs: 60_000, idleMs: 60_000 });
  watch.close();
  for (const controller of calls) {
    assert.equal(controller.signal.aborted, true);
    assert.equal((controller.signal.reason as Error).message, "the run ended");
  }
  const later = new AbortController();
  watch.start({ controller: later, firstByteMs: 60_000, idleMs: 60_000 });
  assert.equal((await abortOf(later, 1000) as Error).message, "the run ended");
});
