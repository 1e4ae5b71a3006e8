/**
 * How the telemetry policy's messages show what they quote; shared by the policy's check and its narrowing.
 * @module
 */

/** True when a parsed value is a mapping (an object that is not a list). */
export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value as a message quotes it: JSON, else its text. */
export const show = (value: unknown) => JSON.stringify(value) ?? String(value);

/** A hosts entry as a message shows it: no user or password before an `@`, nothing after a `:` of a name. */
export function showEntry(entry: unknown): string {
  if (typeof entry !== "string") return show(entry);
  let text = entry.includes("@") ? `…@${entry.slice(entry.lastIndexOf("@") + 1)}` : entry;
  const colon = text.indexOf(":");
  if (colon >= 0 && !text.trim().startsWith("[") && !text.includes("://")) text = `${text.slice(0, colon)}:…`;
  return show(text);
}
