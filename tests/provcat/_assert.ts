/** The assertions the tests use, from node:assert (JSR's @std/assert cannot be reached here). */
import nodeAssert from "node:assert/strict";

/** Fails unless `value` is truthy. */
export function assert(value: unknown, message?: string): asserts value {
  nodeAssert.ok(value, message);
}

/** Fails unless the two are deeply equal. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  nodeAssert.deepStrictEqual(actual, expected, message);
}

/** Fails unless `fn` rejects with an instance of `type` whose message includes `includes`. */
export async function assertRejects(
  fn: () => Promise<unknown>,
  type: new (...args: never[]) => Error,
  includes?: string,
): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    if (!(error instanceof type)) {
      throw new Error(`expected ${type.name}, got ${(error as Error)?.name}: ${(error as Error)?.message}`);
    }
    if (includes !== undefined && !error.message.includes(includes)) {
      throw new Error(`expected the message to include "${includes}", got "${error.message}"`);
    }
    return error;
  }
  throw new Error(`expected ${type.name}, but nothing was thrown`);
}

/** Fails unless `fn` throws an instance of `type` whose message includes `includes`. */
export function assertThrows(
  fn: () => unknown,
  type: new (...args: never[]) => Error,
  includes?: string,
): Error {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof type)) {
      throw new Error(`expected ${type.name}, got ${(error as Error)?.name}: ${(error as Error)?.message}`);
    }
    if (includes !== undefined && !error.message.includes(includes)) {
      throw new Error(`expected the message to include "${includes}", got "${error.message}"`);
    }
    return error;
  }
  throw new Error(`expected ${type.name}, but nothing was thrown`);
}
