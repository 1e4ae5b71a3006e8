/**
 * A file log of a million leaves for the log benchmark, made in one pass and kept under `.tools/bench-log/`
 * between runs: the leaves' hashes go through the library's own `appendToEdge` a chunk at a time (each full tile
 * written as it fills), the entry bundles and the run index are written beside them, and the checkpoint is
 * signed with the log's key. The layout is the one appends make; only the partial tiles of sizes that no
 * checkpoint names are not written.
 * @module
 */
import { dirname, join } from "node:path";
import { bundleBytes, concatHashes } from "../../lib/provevi/log/log_storage.ts";
import { FileLog } from "../../lib/provevi/log/file_log.ts";
import { checkpointText } from "../../lib/provevi/log/checkpoint.ts";
import { leafHash } from "../../lib/provevi/log/merkle.ts";
import { signNote } from "../../lib/provevi/log/note.ts";
import { leafBytes, type RunLeaf } from "../../lib/provevi/log/run_leaf.ts";
import { RunIndex } from "../../lib/provevi/log/run_index.ts";
import { entriesPath, TILE_WIDTH, tilePath } from "../../lib/provevi/log/tiles.ts";
import { appendToEdge, edgeRoot, edgeTiles, type TreeEdge } from "../../lib/provevi/log/tree_edge.ts";

const CHUNK = 65_536;
const VERSION = "v2"; // a new layout of the log is a new version: the kept one is made again

/**
 * The runs root of a file log of `n` leaves, made unless it is kept already.
 *
 * @param n The number of leaves.
 * @param leaf The leaf at an index.
 * @returns The runs root, and whether it was made now (and how long that took, in seconds).
 */
export async function keptLog(
  n: number,
  leaf: (i: number) => RunLeaf,
): Promise<{ runs: string; madeSeconds: number | null }> {
  const dir = new URL(`../../.tools/bench-log/${VERSION}-${n}/`, import.meta.url).pathname;
  const runs = join(dir, "runs");
  try {
    await Deno.stat(join(dir, "ready"));
    return { runs, madeSeconds: null };
  } catch { /* made below */ }
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  const t = performance.now();
  await makeLog(runs, n, leaf);
  await Deno.writeTextFile(join(dir, "ready"), `${n}\n`);
  return { runs, madeSeconds: (performance.now() - t) / 1000 };
}

async function makeLog(runs: string, n: number, leaf: (i: number) => RunLeaf): Promise<void> {
  const log = new FileLog(runs);
  const key = (await log.key({ create: true }))!;
  const index = new RunIndex(log.dir);
  const put = (rel: string, bytes: Uint8Array) => {
    const path = join(log.dir, "tlog", rel);
    Deno.mkdirSync(dirname(path), { recursive: true });
    Deno.writeFileSync(path, bytes);
  };
  let edge: TreeEdge = { size: 0, partial: [] };
  for (let start = 0; start < n; start += CHUNK) {
    const leaves = Array.from({ length: Math.min(CHUNK, n - start) }, (_, i) => leaf(start + i));
    const entries = leaves.map(leafBytes);
    const out = appendToEdge(edge, entries.map(leafHash));
    edge = out.edge;
    for (const t of out.tiles) if (t.tile.width === TILE_WIDTH) put(tilePath(t.tile), t.hashes);
    for (let b = 0; b < entries.length; b += TILE_WIDTH) {
      const group = entries.slice(b, b + TILE_WIDTH);
      put(entriesPath((start + b) / TILE_WIDTH, group.length), bundleBytes(group));
    }
    index.add({
      lines: leaves.map((l, i) => ({ index: start + i, runId: l.run_id })),
      size: start + leaves.length,
      missing: () => [],
    });
  }
  for (const tile of edgeTiles(n)) put(tilePath(tile), concatHashes(edge.partial[tile.level]!));
  const text = checkpointText({ origin: key.origin, size: n, root: edgeRoot(edge), extensions: [] });
  put("checkpoint", new TextEncoder().encode(signNote(text, [key.signer])));
}
