/**
 * provcat.
 * @module
 */
export {};
