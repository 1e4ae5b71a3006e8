/**
 * The names of `open_file.ts`, the one way to open a file another party can swap, as they were first exported
 * here (kept for branches under way; import `open_file.ts`).
 * @module
 */
export {
  closeNoWait,
  NoWaitFile,
  type OpenedInfo,
  openNoWait,
  openNoWaitSync,
  readNoWaitSync,
  sameFile,
} from "./open_file.ts";
export { openFileNoWait } from "./fd_file.ts";
