/**
 * The child of `measuredInChild` (`_setup.ts`): imports a work's module of this folder, calls its export with
 * the arguments given (JSON), and measures the growth of this process's RSS around it (the peak, sampled every
 * 2 ms and at the end, less the RSS before). An export that gives a function has made what its work needs: the
 * measure starts again, around that function's call. Prints one JSON line, `{ grew, ms, got }`, and exits.
 *
 * Arguments: the module's file name (`./_events_size_work.ts`), the export's name, its arguments as a JSON
 * array.
 * @module
 */
const [file, name, args] = Deno.args;
const module = await import(new URL(file!, import.meta.url).href) as Record<string, unknown>;
const work = module[name!];
if (typeof work !== "function") throw new Error(`${file} exports no function ${name}`);

const rss = () => Deno.memoryUsage().rss;
let before = rss(), peak = before, start = performance.now();
const watch = setInterval(() => peak = Math.max(peak, rss()), 2);
let got: unknown;
try {
  got = await work(...JSON.parse(args!) as unknown[]);
  if (typeof got === "function") {
    before = peak = rss();
    start = performance.now();
    got = await got();
  }
} finally {
  clearInterval(watch);
}
const grew = Math.max(peak, rss()) - before;
console.log(JSON.stringify({ grew, ms: Math.round(performance.now() - start), got: got ?? null }));
// what the work left open (a daemon, a store) ends with the process
Deno.exit(0);
