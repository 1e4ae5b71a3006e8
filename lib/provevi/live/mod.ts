/**
 * A run shown to a live viewer: the cut of each event to a level (`shownAt`), the payloads a viewer may read
 * (`payloadOf`, `answerOf`), the feed's items (`event`, `text`, `done`) and the feed of an ended run rebuilt
 * from its evidence (`replay`). Imports `evidence/`, `store/` and `telemetry/`.
 *
 * @example
 * ```ts
 * import { replay } from "./mod.ts";
 * import { FileStore } from "../store/mod.ts";
 * const items = await replay(new FileStore({ runs: "fixtures/runs" }), "run-20261129T120000Z-0badc0de", "names");
 * ```
 * @module
 */
export * from "./live.ts";
export * from "./feed.ts";
export * from "./replay.ts";
