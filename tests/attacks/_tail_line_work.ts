/**
 * The work of tail_line_attacks_test.ts that is measured in a process of its own (`measuredInChild`): the live
 * tail's reader of a file's lines, looking 100 times.
 * @module
 */
import { LineReader } from "../../lib/provevi/evidence/line_reader.ts";

/** Measured: 100 looks of a `LineReader` at `path`: the lines it gave, and what it threw (or null). */
export async function tail(path: string) {
  const reader = new LineReader(path);
  const lines: string[] = [];
  let error: string | null = null;
  try {
    for (let i = 0; i < 100; i++) lines.push(...await reader.next());
  } catch (e) {
    error = String(e);
  }
  return { lines, error };
}
