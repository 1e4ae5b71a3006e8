/**
 * The work of payload_attacks_test.ts measured in a process of its own: `prove payload`'s printing of a payload
 * of `count` empty objects in a list (`[{},{},…]`, 3 bytes each), made unmeasured.
 * @module
 */
import { shownPayload } from "../../cli/prove/payload.ts";

/** Makes the text; then, measured, gives the length of what `prove payload` prints of it. */
export function showManyValues(count: number) {
  const text = `[${"{},".repeat(count - 1)}{}]`;
  return () => ({ printed: shownPayload(text).length, text: text.length });
}
