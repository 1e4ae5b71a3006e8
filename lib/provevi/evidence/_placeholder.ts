/**
 * A switch for tests only: on, every problem's message is a placeholder, so that a test can show that no code
 * reads a message to decide anything (exit codes, JSON, `prove show`, the viewer). Not exported by any mod.ts.
 * @module
 */

/** `on`: {@linkcode problem} writes `(<code>)` instead of the message. */
export const placeholder = { on: false };
