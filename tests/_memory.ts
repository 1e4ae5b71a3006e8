/**
 * The memory this test's isolate holds: its JS heap and the buffers it owns (`heapUsed + external`).
 *
 * `deno test --parallel` runs every test file in one process, each in its own isolate, so the process's RSS
 * grows with whatever the other files do at the same moment (530 MB once, under the whole suite): a bound on
 * what one test holds has to be measured on its own isolate. What a test reads whole (an `arrayBuffer()`, a
 * string, a decoded message) is counted here. A bound on a process's RSS (what native code and the allocator
 * hold too) is measured in a process of its own: `measuredInChild` (tests/attacks/_setup.ts).
 * @module
 */

/**
 * The bytes this isolate holds now.
 *
 * @returns `heapUsed + external` of `Deno.memoryUsage()`.
 * @example
 * ```ts
 * import { isolateBytes } from "./_memory.ts";
 * const before = isolateBytes();
 * // … the work whose memory is bounded …
 * console.log(isolateBytes() - before < 64 * 1024 * 1024);
 * ```
 */
export function isolateBytes(): number {
  const m = Deno.memoryUsage();
  return m.heapUsed + m.external;
}
