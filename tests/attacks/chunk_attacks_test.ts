/**
 * A peer that sends its bytes one TCP segment at a time. Deno hands each chunk of a request's body and of a fetch
 * answer in a 64 KiB buffer of its own, whatever the chunk's size, so whatever keeps the chunks can hold 64 KiB per
 * byte: the door's read-ahead of a body held 196 MB for 3,000 bytes, where a handler waited on a run's lock. Every
 * keeper of a peer's chunks (the door's read-ahead, a body collected to its cap, an MLflow reply, a provider's
 * answer handed to the SDK) takes them through `ownChunk`. The cases run in `_chunk_child.ts`, in a process with
 * V8's `gc()`, so that what is held is measured after a collection.
 */
import assert from "node:assert/strict";
import { Tally } from "./_tally.ts";
import { heldInChild } from "./_setup.ts";

/** 3,000 chunks at their own size are a few MB; 3,000 reads of 64 KiB are 196 MB. */
const BOUND = 64 * 1024 * 1024;

Deno.test("a peer that sends a byte at a time makes no reader hold 64 KiB a byte: door read-ahead, collected bodies, MLflow replies, provider answers", async () => {
  const held = await heldInChild("./_chunk_child.ts");
  const tally = new Tally("byte-at-a-time attacks");
  for (const [name, bytes] of Object.entries(held)) {
    tally.add(name, { stopped: bytes < BOUND, recorded: bytes < BOUND });
    console.log(`${name}: ${(bytes / 1e6).toFixed(1)} MB held for 3,000 bytes`);
  }
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});
