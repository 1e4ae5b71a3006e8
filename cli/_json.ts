/**
 * The one naming convention of every `--json` output of `prove`, `provr` and `provtrace`: the evidence's
 * snake_case. The library's result types keep TypeScript's camelCase (they are public API, read by programs and
 * by the viewer); the commands print them through {@linkcode jsonText}, which renames their keys at this one
 * edge and leaves the user's own keys as written. docs/prove.md, "JSON output", documents it.
 * @module
 */

/**
 * The keys whose value belongs to the user or to the evidence, kept as written, keys and all: the event's
 * `data` (the record, as hashed), a policy's `libraries` and `destinations` (names the user chose), an
 * assessment's `value`, the `manifest` (the evidence file as written, already snake_case, its outputs keyed
 * by path), an agent version's `tools` and `limits` (as the run file wrote them), a run's `params`, and a
 * span's `attributes` (the names its sender gave).
 */
export const USER_KEYED: ReadonlySet<string> = new Set([
  "data",
  "libraries",
  "destinations",
  "value",
  "manifest",
  "tools",
  "limits",
  "params",
  "attributes",
]);

/**
 * A camelCase key in snake_case: `runId` → `run_id`, `mlflowRunId` → `mlflow_run_id`. A key that is not
 * camelCase (`run_id`, `@ai-sdk/openai`, `Content-Type`) is left alone.
 *
 * @param key The key.
 */
export function snakeKey(key: string): string {
  return /^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$/.test(key)
    ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
    : key;
}

/**
 * A value with its keys in snake_case, except under the {@linkcode USER_KEYED} keys, whose values are kept
 * as written. Values themselves (texts, numbers) are never changed; `toJSON` is honoured first.
 *
 * @param value A result, as a library function returns it.
 */
export function snakeKeys(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  const own = value as { toJSON?: () => unknown };
  if (typeof own.toJSON === "function") return snakeKeys(own.toJSON());
  if (Array.isArray(value)) return value.map(snakeKeys);
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (inner === undefined) continue;
    out[snakeKey(key)] = USER_KEYED.has(key) ? inner : snakeKeys(inner);
  }
  return out;
}

/**
 * The text a command prints for `--json`: the value in snake_case, two-space indented.
 *
 * @param value A result, as a library function returns it.
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(snakeKeys(value), null, 2);
}
