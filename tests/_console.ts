/**
 * Reading a guide's ```console blocks and matching a command's output with what the guide shows, by the rules
 * written at the top of `docs_console_test.ts` (which runs every guide's blocks) and shared with the tests
 * that run a skipped block against a server of their own (`provevi/postgres/postgres_docs_test.ts`).
 * @module
 */

/** One command of a block, with the output the doc shows. */
export interface Step {
  command: string;
  expected: string[];
  line: number;
}

/** The console blocks of a Markdown text, each as its steps, less the skipped ones. */
export function consoleBlocks(text: string): { steps: Step[]; skipped: string | null; line: number }[] {
  const lines = text.split("\n");
  const blocks: { steps: Step[]; skipped: string | null; line: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== "```console") continue;
    let j = i - 1;
    while (j >= 0 && lines[j]!.trim() === "") j--;
    const skip = j >= 0 ? lines[j]!.match(/^<!-- docs-test: skip \((.+)\) -->$/) : null;
    const steps: Step[] = [];
    let k = i + 1;
    for (; k < lines.length && lines[k]!.trim() !== "```"; k++) {
      const line = lines[k]!;
      if (line.startsWith("$ ")) steps.push({ command: line.slice(2), expected: [], line: k + 1 });
      else if (line.startsWith("> ") && steps.length && steps.at(-1)!.expected.length === 0) {
        steps.at(-1)!.command += "\n" + line.slice(2);
      } else if (steps.length) steps.at(-1)!.expected.push(line);
    }
    for (const step of steps) {
      while (step.expected.length && step.expected.at(-1) === "") step.expected.pop();
    }
    blocks.push({ steps, skipped: skip ? skip[1]! : null, line: i + 1 });
    i = k;
  }
  return blocks;
}

const RUN_ID = /run-\d{8}T\d{6}Z-[0-9a-f]{8}/g;
const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;

function normal(line: string): string {
  return line.replace(RUN_ID, "run-[ID]").replace(TIME, "[TIME]");
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** True when the output lines match the expected ones, `[..]` and `...` as the rules say. */
export function matches(actual: string[], expected: string[]): boolean {
  const lineMatches = (a: string, e: string) =>
    new RegExp(`^${normal(e).split("[..]").map(escape).join(".*")}$`).test(normal(a));
  const go = (ai: number, ei: number): boolean => {
    if (ei === expected.length) return ai === actual.length;
    if (expected[ei] === "...") {
      for (let k = ai; k <= actual.length; k++) if (go(k, ei + 1)) return true;
      return false;
    }
    return ai < actual.length && lineMatches(actual[ai]!, expected[ei]!) && go(ai + 1, ei + 1);
  };
  return go(0, 0);
}
