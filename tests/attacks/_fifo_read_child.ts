/**
 * Reads a path many times with one of the readers that look at a file before they open it, and prints `done`
 * with how many reads gave bytes and how many were refused: a reader that waited on a pipe swapped in after its
 * look never prints. The reader of `fifo_swap_attacks_test.ts`.
 * Arguments: the reader (`capped`, `capped-sync`, `bounded`, `received`, `packed`, `pack-reader`, `sha256`,
 * `live-tail`, `run-lines`, `view-payload`, `catalog-hash`, `store-read`), the path (in a
 * folder `evidence/`), the number of reads.
 * @module
 */
import { basename, dirname } from "node:path";
import { readCapped, readCappedSync, refuseNonFile } from "../../lib/provevi/evidence/open_file.ts";
import { readBoundedText } from "../../lib/provevi/evidence/read_text.ts";
import { ReceivedBodies } from "../../lib/provevi/receiver/received_bodies.ts";
import { packedPayloads } from "../../lib/provevi/evidence/payload_pack.ts";
import { PackReader } from "../../lib/provevi/store/pack_file.ts";
import { sha256File } from "../../lib/provevi/evidence/hash.ts";
import { LineReader } from "../../lib/provevi/evidence/line_reader.ts";
import { firstLine, lastLine } from "../../lib/provevi/runs/_run_lines.ts";
import { openPayloadFile } from "../../lib/provevi/viewer/view_payload.ts";
import { hashFile } from "../../lib/provcat/_files.ts";
import { FolderStore } from "../../lib/provcat/folder_store.ts";

const [reader, path, times] = Deno.args as [string, string, string];
const read: Record<string, () => unknown> = {
  capped: () => readCapped(path, 4096),
  "capped-sync": () => readCappedSync(path, 4096),
  bounded: () => readBoundedText(path, { limit: 4096, what: "the key" }),
  received: () => new ReceivedBodies(dirname(path)).readRest(), // as the writer reads what is left at its seal
  packed: () => packedPayloads(dirname(dirname(path))),
  sha256: () => sha256File(path),
  "pack-reader": () => new PackReader(path, () => refuseNonFile(path)).read("0".repeat(64)),
  "live-tail": () => new LineReader(path).next(),
  "run-lines": async () => [await firstLine(path), await lastLine(path)],
  "view-payload": async () =>
    (await openPayloadFile(dirname(dirname(dirname(path))), basename(path))).close(),
  "catalog-hash": () => hashFile(path),
  "store-read": () => new FolderStore("s", { type: "folder", path: dirname(path) }).read(basename(path)),
};
let [read_, refused] = [0, 0];
for (let i = 0; i < Number(times); i++) {
  try {
    await read[reader]!();
    read_ += 1;
  } catch {
    refused += 1;
  }
}
console.log(`done ${read_} ${refused}`);
