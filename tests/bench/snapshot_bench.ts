/**
 * The speed of `Catalog.snapshot` on a 1 GiB folder of 1,000 files, the first time and reused, each as a ratio
 * to `cp -r` of the same folder in the same run. The data lives in a temp folder, deleted at the end.
 *
 * ```sh
 * deno run --allow-read --allow-write --allow-env --allow-run=cp,chmod,rm tests/bench/snapshot_bench.ts [files] [MiB per file]
 * ```
 * @module
 */
import { join } from "node:path";
import { Catalog } from "../../lib/provcat/catalog.ts";

/** The figures of one run. */
export interface SnapshotBench {
  files: number;
  bytes: number;
  cpSeconds: number;
  firstSeconds: number;
  reusedSeconds: number;
  firstRatio: number;
  reusedRatio: number;
}

async function run(cmd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
}

/**
 * Runs the benchmark and prints its figures.
 *
 * @param options `files` (1,000) and `mib` per file (1 MiB by default, 1 GiB in all).
 * @returns The figures.
 * @example
 * ```ts
 * import { main } from "./snapshot_bench.ts";
 * const figures = await main({ files: 10, mib: 1 });
 * ```
 */
export async function main(options: { files?: number; mib?: number } = {}): Promise<SnapshotBench> {
  const files = options.files ?? 1000;
  const size = (options.mib ?? 1) * 1024 * 1024;
  const dir = await Deno.makeTempDir({ prefix: "provcat-bench-" });
  try {
    const data = join(dir, "data");
    await Deno.mkdir(data);
    const block = new Uint8Array(size);
    for (let i = 0; i < files; i++) {
      for (let o = 0; o < size; o += 65536) {
        crypto.getRandomValues(block.subarray(o, Math.min(size, o + 65536)));
      }
      await Deno.writeFile(join(data, `part-${String(i).padStart(4, "0")}.bin`), block);
    }
    const catalog = await Catalog.open({
      config: {
        cache: join(dir, "cache"),
        stores: { data: { type: "folder", path: data } },
        routes: [{ prefix: "data://bench/speed/dev", store: "data" }],
      },
    });
    // A live folder's files are rarely seconds old; files changed within two seconds of a hash are read again
    // (git's racy entries), so the data ages that long first, as any folder does between runs.
    await new Promise((r) => setTimeout(r, 2100));
    // Read the data once, so that every measurement starts from the same warm page cache.
    await run("cp", "-r", data, join(dir, "warm"));
    await run("rm", "-rf", join(dir, "warm"));
    let t = performance.now();
    await run("cp", "-r", data, join(dir, "copy"));
    const cpSeconds = (performance.now() - t) / 1000;
    await run("rm", "-rf", join(dir, "copy"));
    t = performance.now();
    const first = await catalog.snapshot("data://bench/speed/dev");
    const firstSeconds = (performance.now() - t) / 1000;
    t = performance.now();
    const again = await catalog.snapshot("data://bench/speed/dev");
    const reusedSeconds = (performance.now() - t) / 1000;
    if (first.reused || !again.reused || again.path !== first.path) {
      throw new Error("the snapshot was not reused");
    }
    const figures: SnapshotBench = {
      files,
      bytes: files * size,
      cpSeconds,
      firstSeconds,
      reusedSeconds,
      firstRatio: firstSeconds / cpSeconds,
      reusedRatio: reusedSeconds / cpSeconds,
    };
    const gib = (figures.bytes / 2 ** 30).toFixed(2);
    console.log(`snapshot of ${files} files, ${gib} GiB:`);
    console.log(`  cp -r            ${cpSeconds.toFixed(2)} s`);
    console.log(
      `  snapshot, first  ${firstSeconds.toFixed(2)} s  (${figures.firstRatio.toFixed(2)} x cp -r)`,
    );
    console.log(
      `  snapshot, reused ${reusedSeconds.toFixed(2)} s  (${figures.reusedRatio.toFixed(2)} x cp -r)`,
    );
    await catalog.close();
    return figures;
  } finally {
    await run("chmod", "-R", "u+w", dir);
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const [files, mib] = Deno.args.map(Number);
  await main({ ...(files ? { files } : {}), ...(mib ? { mib } : {}) });
}
