/**
 * Reads ahead: the reads of the next few items of a list start while the caller works on the current one, so a
 * check of thousands of runs does not wait on the disk (a file thread, on a busy machine) for each run in turn.
 * @module
 */

/** How many items are read at once by default: enough to cover a run's work, few enough to bound memory. */
export const READ_AHEAD = 8;

/**
 * Starts `read` for the first items, and gives each item's read in order, starting the next one's.
 *
 * @param count The number of items.
 * @param read Starts the read of item `i`.
 * @param width How many reads may be under way at once.
 * @returns `take(i)`, to call for i = 0, 1, 2, … in order: item i's read. A read that fails is not an unhandled
 * rejection while it waits to be taken (its error is the taker's); one never taken is dropped.
 * @example
 * ```ts
 * import { readAhead } from "./_read_ahead.ts";
 * const names = ["a", "b"];
 * const take = readAhead(names.length, (i) => Promise.resolve(names[i]!.toUpperCase()));
 * await take(0); // "A"
 * ```
 */
export function readAhead<T>(
  count: number,
  read: (i: number) => Promise<T>,
  width = READ_AHEAD,
): (i: number) => Promise<T> {
  if (!Number.isInteger(width) || width < 1) throw new RangeError(`readAhead: width ${width} is not a count`);
  const started = new Map<number, Promise<T>>();
  let next = 0;
  const start = (upTo: number) => {
    for (; next < Math.min(count, upTo); next++) {
      const p = read(next);
      p.catch(() => {});
      started.set(next, p);
    }
  };
  return (i) => {
    start(i + width);
    const p = started.get(i);
    if (p === undefined) throw new RangeError(`readAhead: item ${i} was taken already, or is past ${count}`);
    started.delete(i);
    return p;
  };
}
