/**
 * The file log's index from a run to its leaf, so that a run's proof is found without reading every entry:
 * `index/<3 hex>` files of `<index> <run_id>` lines, one file per start of the SHA-256 of the run ID (4,096 of
 * them: at a million runs, some 250 lines each), and `indexed`, the size up to which every leaf has its line on
 * disk. A line is only a hint: the leaf at its index is read to confirm it. `indexed` is written only after the
 * lines it covers were fsynced, so a leaf past it is looked for in the entries, and a line lost in a crash
 * costs a read, never a wrong answer.
 * @module
 */
import { join } from "node:path";
import { sha256Hex } from "../evidence/hash.ts";

/** A leaf's line: its index and its run. */
export interface IndexLine {
  index: number;
  runId: string;
}

/** The index of a file log, in `<log>/index/` and `<log>/indexed`. */
export class RunIndex {
  readonly #dir: string;
  readonly #indexed: string;

  /** @param logDir The log's folder. */
  constructor(logDir: string) {
    this.#dir = join(logDir, "index");
    this.#indexed = join(logDir, "indexed");
  }

  /** The folder of the index files. */
  get dir(): string {
    return this.#dir;
  }

  /** The index file of a run. */
  fileOf(runId: string): string {
    return join(this.#dir, sha256Hex(runId).slice(0, 3));
  }

  /** The size up to which every leaf has its line on disk (0 when unknown). */
  indexedSize(): number {
    try {
      const n = Number(Deno.readTextFileSync(this.#indexed).trim());
      return Number.isSafeInteger(n) && n >= 0 ? n : 0;
    } catch {
      return 0;
    }
  }

  /**
   * Finds a run's leaf.
   *
   * @param runId The run.
   * @param size The log's size: a line past it is not read.
   * @param names Whether the leaf at an index is the run's (the confirmation of a line, and the scan).
   * @returns The index, or null when no leaf below `size` is the run's.
   */
  async lookup(
    runId: string,
    size: number,
    names: (index: number) => Promise<boolean>,
  ): Promise<number | null> {
    let text = "";
    try {
      text = await Deno.readTextFile(this.fileOf(runId));
    } catch { /* no line yet */ }
    const suffix = ` ${runId}`;
    for (const line of text.split("\n")) {
      if (!line.endsWith(suffix)) continue;
      const index = Number(line.slice(0, -suffix.length));
      if (Number.isSafeInteger(index) && index < size && await names(index)) return index;
    }
    for (let index = Math.min(this.indexedSize(), size); index < size; index++) {
      if (await names(index)) return index;
    }
    return null;
  }

  /**
   * Appends lines to their files (not fsynced).
   *
   * @param lines The leaves' lines.
   * @returns The files written, to fsync before {@linkcode RunIndex.markIndexed}.
   */
  add(lines: readonly IndexLine[]): string[] {
    const byFile = new Map<string, string>();
    for (const l of lines) {
      const file = this.fileOf(l.runId);
      byFile.set(file, (byFile.get(file) ?? "") + `${l.index} ${l.runId}\n`);
    }
    if (byFile.size) Deno.mkdirSync(this.#dir, { recursive: true });
    for (const [file, text] of byFile) Deno.writeTextFileSync(file, text, { append: true });
    return [...byFile.keys()];
  }

  /** Records that every leaf below `size` has its line on disk (once those lines were fsynced). */
  markIndexed(size: number): void {
    const tmp = `${this.#indexed}.tmp`;
    Deno.writeTextFileSync(tmp, `${size}\n`);
    Deno.renameSync(tmp, this.#indexed);
  }
}
