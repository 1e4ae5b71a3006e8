/**
 * Prints a benchmark's figure beside its reference, measured in the same run, as a ratio.
 * @module
 */

/** One line: the figure, the reference and their ratio, and the target. */
export function report(name: string, figure: number, reference: number, unit: string, target: string): void {
  const ratio = figure / reference;
  console.log(
    `${name}: ${fmt(figure)} ${unit}; reference ${fmt(reference)} ${unit}; ratio ${
      ratio.toFixed(2)
    } (target ${target})`,
  );
}

function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(2);
}

/** The median of a list of numbers. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
