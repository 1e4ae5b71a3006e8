/**
 * The command a compiled provr uses to start its sandbox processes, as `deno run` can give it here (no base
 * binary for `deno compile` can be had on these machines): `deno run` with exactly the flags that the compile
 * task bakes into dist/provr, on cli/provr.ts, which the compiled binary runs. Sandbox adds the role's argument.
 * @module
 */
import CONFIG from "../../../deno.json" with { type: "json" };
import { withSetsSpelledOut } from "../../../cli/_permissions.ts";

const ROOT = new URL("../../../", import.meta.url);

/**
 * The flags `deno task compile` gives dist/provr, its permission set spelled out (without `--include`, which only
 * matters to compile).
 */
export function compiledProvrFlags(): string[] {
  const step = CONFIG.tasks.compile.split("&&").find((s) => s.includes("-o dist/provr "));
  if (!step) throw new Error("deno.json's compile task builds no dist/provr");
  const words = step.trim().split(/\s+/);
  return withSetsSpelledOut(
    words.slice(words.indexOf("compile") + 1, words.indexOf("-o")).filter((w) => !w.startsWith("--include")),
  );
}

/** `deno run` with the compiled provr's flags on cli/provr.ts: the binary started again, as it starts itself. */
export function selfCommand(): string[] {
  return [
    Deno.execPath(),
    "run",
    ...compiledProvrFlags(),
    `--config=${new URL("deno.json", ROOT).pathname}`,
    new URL("cli/provr.ts", ROOT).pathname,
  ];
}
