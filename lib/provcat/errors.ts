/**
 * The errors that provcat raises on purpose. provcat imports nothing of provevi, so its user errors carry
 * their own `exitCode`, which the commands map the same way as provevi's.
 * @module
 */

/**
 * An error a user can cause in the catalog: a URI that is not one, a URI that no route covers, a store that
 * cannot be read. The message names the thing and the fix.
 *
 * @example
 * ```ts
 * import { CatalogError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new CatalogError('no route covers "run://acme/x/dev/r"; add a route for its prefix to provcat.yaml');
 * assert.equal(error.exitCode, 1);
 * assert.equal(error.name, "CatalogError");
 * ```
 */
export class CatalogError extends Error {
  /** The exit code a command gives for this error. */
  readonly exitCode: number = 1;
  /**
   * @param message One line that names the thing and the fix.
   * @param options The `cause` when this error wraps another.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CatalogError";
  }
}

/**
 * A text that is not a catalog URI; the message says which part is wrong.
 *
 * @example
 * ```ts
 * import { parseUri, UriError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * assert.throws(() => parseUri("run://acme"), UriError);
 * ```
 */
export class UriError extends CatalogError {
  /** @param message The URI and the part that is wrong. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UriError";
  }
}

/**
 * A thing the catalog looked for and did not find: a path at a version, a branch, a commit.
 *
 * @example
 * ```ts
 * import { CatalogError, CatalogNotFound } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new CatalogNotFound('"data://a/b/c/x" is not in store "lake" at commit:0123abcd');
 * assert.ok(error instanceof CatalogError);
 * ```
 */
export class CatalogNotFound extends CatalogError {
  /** @param message What was looked for, and where. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CatalogNotFound";
  }
}
