/**
 * The rows' pass (`otlp_rows.ts`) keeps the JSON of the texts it writes (span names, scopes, status messages,
 * kept attribute values) from body to body (`row_texts.ts`), up to a bound of 4 MiB. Bodies of texts never seen
 * before must leave it holding about that, whatever their shape: a body is read whole before a receiver counts
 * its spans, and IDs of responses and tool calls are fresh in every span. The cases run in
 * `_row_texts_child.ts`, in a process with V8's `gc()`, so that what is held is measured after a collection.
 * @module
 */
import assert from "node:assert/strict";
import { Tally } from "./_tally.ts";
import { heldInChild } from "./_setup.ts";

/** The texts' bound (`TEXTS_MAX_BYTES`), and half as much again for the estimate of what each text takes. */
const BOUND = 6 * 1024 * 1024;

Deno.test("bodies of fresh names, messages, kept values and scopes leave the rows' pass holding about its texts' bound", async () => {
  const held = await heldInChild("./_row_texts_child.ts");
  const tally = new Tally("fresh texts in the rows' pass");
  for (const [name, bytes] of Object.entries(held)) {
    tally.add(name, { stopped: bytes < BOUND, recorded: bytes < BOUND });
    console.log(`${name}: ${(bytes / 1e6).toFixed(1)} MB held`);
  }
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});
