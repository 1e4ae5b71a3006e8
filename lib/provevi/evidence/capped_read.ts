/**
 * The capped reads of `open_file.ts`, the one way to open a file another party can swap, as they were first
 * exported here (kept for branches under way; import `open_file.ts`).
 * @module
 */
export { readCapped, readCappedSync, refuseNonFile } from "./open_file.ts";
