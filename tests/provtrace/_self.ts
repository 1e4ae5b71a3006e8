/**
 * The command a compiled provtrace uses to start the process that answers a query, as `deno run` can give it
 * here (no base binary for `deno compile` can be had on these machines): `deno run` with exactly the flags
 * that the compile task bakes into dist/provtrace, on cli/provtrace.ts, which the compiled binary runs.
 * queryTrace adds the role's argument.
 * @module
 */
import CONFIG from "../../deno.json" with { type: "json" };

const ROOT = new URL("../../", import.meta.url);

/** The flags `deno task compile` gives dist/provtrace. */
export function compiledProvtraceFlags(): string[] {
  const step = CONFIG.tasks.compile.split("&&").find((s) => s.includes("-o dist/provtrace "));
  if (!step) throw new Error("deno.json's compile task builds no dist/provtrace");
  const words = step.trim().split(/\s+/);
  return words.slice(words.indexOf("compile") + 1, words.indexOf("-o")).filter((w) =>
    !w.startsWith("--include")
  );
}

/** `deno run` with the compiled provtrace's flags on cli/provtrace.ts: the binary started again. */
export function provtraceSelf(): string[] {
  return [
    Deno.execPath(),
    "run",
    ...compiledProvtraceFlags(),
    `--config=${new URL("deno.json", ROOT).pathname}`,
    new URL("cli/provtrace.ts", ROOT).pathname,
  ];
}
