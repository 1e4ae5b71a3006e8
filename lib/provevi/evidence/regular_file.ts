/**
 * The names of `open_file.ts`, the one way to open a file another party can swap, as they were first exported
 * here (kept for branches under way; import `open_file.ts`, and `hash.ts` for `hashRegularFile`).
 * @module
 */
export { IrregularFile, openPlainFileSync, PlainFile, readRegularFile } from "./open_file.ts";
export { hashRegularFile } from "./hash.ts";
