/**
 * Writes runs into a postgres store, for the tests of many writers and of a killed writer. As a program:
 * `deno run … _pg_writer.ts URI RUNS PREFIX COUNT NOTES`; it prints `open ID` and `sealed ID` lines.
 * @module
 */
import { PostgresStore } from "../../../lib/provevi/postgres/postgres_store.ts";
import { writeRichRun } from "../_rich_run.ts";

/** Writes `count` runs and calls `say` before and after each. */
export async function writeRuns(
  options: { uri: string; runs: string; prefix: string; count: number; notes: number },
  say: (line: string) => void,
): Promise<void> {
  await using store = await PostgresStore.open(options.uri, { runs: options.runs, max: 2 });
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

if (import.meta.main) {
  const encoder = new TextEncoder();
  const [uri, runs, prefix, count, notes] = Deno.args;
  await writeRuns(
    { uri: uri!, runs: runs!, prefix: prefix!, count: Number(count), notes: Number(notes ?? 0) },
    (line) => void Deno.stdout.writeSync(encoder.encode(line + "\n")),
  );
}
