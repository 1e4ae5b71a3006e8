/**
 * provrun.
 * @module
 */
export {};
