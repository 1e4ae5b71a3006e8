import assert from "node:assert/strict";
import { printable } from "../../cli/_io.ts";

Deno.test("printable() writes control characters as escapes, so recorded text cannot drive a terminal", () => {
  assert.equal(printable("a\u001b[31mred\u009bX"), "a\\u001b[31mred\\u009bX");
  assert.equal(printable("tab\tand\nnewline stay"), "tab\tand\nnewline stay");
  // JSON stays JSON: an escaped C1 code in a string means the same character.
  const json = JSON.stringify({ text: "\u009b2J" });
  assert.deepEqual(JSON.parse(printable(json)), { text: "\u009b2J" });
});
