/**
 * provtrace.
 * @module
 */
export {};
