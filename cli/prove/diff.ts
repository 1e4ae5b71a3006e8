/**
 * `prove diff A B`: the first divergence of two recorded runs and every difference between them, aligned step by
 * step; exit 0 when they are identical, 1 when they differ, as diff(1) does.
 * @module
 */
import type { Divergence, RunDiff } from "../../lib/provevi/mod.ts";
import { diffRuns } from "../../lib/provevi/diff/mod.ts";
import { findRun } from "../../lib/provevi/runs/mod.ts";
import { placeOf } from "../../lib/provevi/diff/mod.ts";
import { UsageError } from "../_main.ts";
import { jsonText } from "../_json.ts";
import type { Io } from "../_io.ts";
import { count } from "../_listing.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addDiff({ program, io, result, withStore }: ProveContext): void {
  program.command("diff")
    .description(
      "Compare two runs step by step: the first divergence, then every difference (settings, inputs, prompts, " +
        "model answers, tool calls and results, outputs, tokens, verdict). Exit 1 when they differ.",
    )
    .argument("<a>", "a run ID, latest, the start of a run ID, or a run folder's path")
    .argument("<b>", "the other run")
    .option("--limit <n>", "list at most this many differences (200)")
    .option("--json", "print JSON")
    .action((a: string, b: string, opts: { limit?: string; json?: boolean }) => {
      const limit = opts.limit === undefined ? 200 : Number(opts.limit);
      if (!Number.isSafeInteger(limit) || limit < 1) {
        throw new UsageError(`--limit ${opts.limit}: give a whole number from 1`);
      }
      return withStore(async (store) => {
        const [ra, rb] = [await findRun(a, { store }), await findRun(b, { store })];
        const diff = await diffRuns(ra, rb, { limit });
        if (opts.json) io.out(jsonText(diff));
        else printDiff(diff, io);
        result.code = diff.identical ? 0 : 1;
      });
    });
}

/**
 * Prints a difference: one line for the verdict and the first divergence, every difference one line each, then
 * the two runs side by side.
 *
 * @param diff The difference.
 * @param io Where to print.
 */
export function printDiff(diff: RunDiff, io: Io): void {
  const { a, b } = diff;
  if (diff.identical) {
    io.out(
      `${a.run_id} and ${b.run_id} are identical step for step (${count(a.steps, "model call")}, ${
        count(a.events, "event")
      })`,
    );
  } else {
    const first = diff.first!;
    io.out(
      `${a.run_id} and ${b.run_id} differ; first at ${placeOf(first)}, ${where(first)}: ${shown(first.what)}`,
    );
    io.out(`  ${first.detail}`);
    const total = diff.differences.length + diff.more;
    const counts = Object.entries(diff.counts).map(([k, n]) => `${shown(k)} ${n}`).join(", ");
    io.out(`${total} difference${total === 1 ? "" : "s"} (${counts})`);
    for (const d of diff.differences) io.out(`  ${differenceLine(d)}`);
    if (diff.more) io.out(`  … and ${diff.more} more (--limit)`);
  }
  const row = (name: string, x: string, y: string) => io.out(`  ${name.padEnd(8)} ${x.padEnd(32)} ${y}`);
  row("", "A", "B");
  row(
    "status",
    a.error ? `${a.status} (${a.error.split(":")[0]})` : a.status,
    b.error ? `${b.status} (${b.error.split(":")[0]})` : b.status,
  );
  row("steps", String(a.steps), String(b.steps));
  row("events", String(a.events), String(b.events));
  row(
    "tokens",
    `${a.tokens.input} in, ${a.tokens.output} out`,
    `${b.tokens.input} in, ${b.tokens.output} out`,
  );
}

function where(d: Divergence): string {
  const side = (r: Divergence["a"], name: string) => (r ? `${name} seq ${r.seq}` : `none in ${name}`);
  const type = d.a?.type ?? d.b?.type ?? "";
  return `${type} (${side(d.a, "A")}, ${side(d.b, "B")})`;
}

function differenceLine(d: Divergence): string {
  const at = (r: Divergence["a"]) => (r ? String(r.seq).padStart(5) : "    -");
  return `${placeOf(d).padEnd(9)} ${shown(d.what).padEnd(12)} ${at(d.a)} ${at(d.b)}  ${d.detail}`;
}

/** A kind of difference in words: `model_answer` is "model answer". */
function shown(what: string): string {
  return what.replaceAll("_", " ");
}
