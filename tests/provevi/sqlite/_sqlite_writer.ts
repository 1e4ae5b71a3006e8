/**
 * Writes runs into a sqlite store, for the tests of many writers and of a killed writer. As a program:
 * `deno run … _sqlite_writer.ts DB RUNS PREFIX COUNT NOTES [together]`; it prints `open ID` and `sealed ID`
 * lines (with `together`, it first prints `ready` and waits for its input to close: see `writeTogether`).
 * As a worker: post `{ db, runs, prefix, count, notes }` and it answers with the sealed IDs.
 * @module
 */
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { writeRichRun } from "../_rich_run.ts";

/** Writes `count` runs and calls `say` before and after each. */
export async function writeRuns(
  options: { db: string; runs: string; prefix: string; count: number; notes: number },
  say: (line: string) => void,
): Promise<void> {
  await using store = new SqliteStore(options.db, { runs: options.runs });
  for (let i = 0; i < options.count; i++) {
    const id = `${options.prefix}-${String(i).padStart(4, "0")}`;
    say(`open ${id}`);
    await writeRichRun(await store.openRun(id), {
      notes: options.notes,
      inputs: [`data+table://acme/demo/dev/in/${i % 7}`],
    });
    say(`sealed ${id}`);
  }
}

const encoder = new TextEncoder();
// In a worker, import.meta.main is true too, so the worker is told apart first.
const inWorker = typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined";
if (inWorker) {
  const self = globalThis as unknown as {
    onmessage: (e: MessageEvent) => void;
    postMessage: (m: unknown) => void;
  };
  self.onmessage = async (e: MessageEvent) => {
    const sealed: string[] = [];
    try {
      await writeRuns(e.data, (line) => void (line.startsWith("sealed ") && sealed.push(line.slice(7))));
      self.postMessage({ sealed });
    } catch (error) {
      self.postMessage({ sealed, error: String(error) });
    }
  };
} else if (import.meta.main) {
  const [db, runs, prefix, count, notes, together] = Deno.args;
  if (together === "together") {
    Deno.stdout.writeSync(encoder.encode("ready\n"));
    await new Response(Deno.stdin.readable).arrayBuffer();
  }
  await writeRuns(
    { db: db!, runs: runs!, prefix: prefix!, count: Number(count), notes: Number(notes ?? 0) },
    (line) => void Deno.stdout.writeSync(encoder.encode(line + "\n")),
  );
}
