/**
 * How the viewer's script writes hashes, times, durations, sizes and JSON.
 * @module
 */

/** The start of a hash, or a dash. */
export function short(hash: unknown, n = 12): string {
  return hash ? String(hash).slice(0, n) : "—";
}

/** An event time as date and time to the second. */
export function when(time: string | null | undefined): string {
  if (!time) return "—";
  return time.slice(0, 10) + " " + time.slice(11, 19);
}

/** An event time as the time of day to the millisecond. */
export function clock(time: string | null | undefined): string {
  return time ? time.slice(11, 23) : "";
}

/** Microseconds since the epoch of an event time. */
export function micros(time: string): number {
  const base = Date.parse(time.slice(0, 19) + "Z");
  const m = /\.(\d+)Z$/.exec(time);
  return base * 1000 + (m ? Number((m[1] + "000000").slice(0, 6)) : 0);
}

/** A duration in microseconds, in the unit that reads best. */
export function duration(us: number): string {
  if (us < 1000) return Math.max(0, Math.round(us)) + " µs";
  if (us < 1e6) return (us / 1000).toFixed(us < 1e4 ? 1 : 0) + " ms";
  if (us < 6e7) return (us / 1e6).toFixed(2) + " s";
  return Math.floor(us / 6e7) + " min " + Math.round((us % 6e7) / 1e6) + " s";
}

/** A size in bytes, in the unit that reads best. */
export function bytes(n: number): string {
  if (n < 1024) return n + " B";
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KiB";
  if (n < 1024 * 1024 * 1024) return (n / 1024 / 1024).toFixed(1) + " MiB";
  return (n / 1024 / 1024 / 1024).toFixed(2) + " GiB";
}

/** JSON, indented. */
export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** A count of tokens: 1,234, or 12.3k past ten thousand. */
export function tokens(n: number): string {
  return n < 10_000 ? n.toLocaleString("en-US") : (n / 1000).toFixed(n < 100_000 ? 1 : 0) + "k";
}

/** An amount of money as its decimal text, to four significant places past the point, with its currency. */
export function money(amount: string, currency: string | null = null): string {
  const [whole = "0", frac = ""] = amount.split(".");
  const firstDigit = frac.search(/[1-9]/);
  const keep = whole !== "0" ? 2 : Math.max(2, firstDigit + 2);
  const shown = frac.length > keep ? `${whole}.${frac.slice(0, keep)}` : frac ? `${whole}.${frac}` : whole;
  return currency === null || currency === "USD" ? "$" + shown : `${shown} ${currency}`;
}
