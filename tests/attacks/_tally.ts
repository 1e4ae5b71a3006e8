/**
 * The attack suite's counts, printed at the end of each attack file so that they can go in a closing note.
 * @module
 */

/** Counts of one kind of attack. */
export class Tally {
  tried = 0;
  stopped = 0;
  recorded = 0;
  readonly missed: string[] = [];

  constructor(readonly kind: string) {}

  /** Counts one attempt. */
  add(name: string, outcome: { stopped: boolean; recorded: boolean }): void {
    this.tried += 1;
    if (outcome.stopped) this.stopped += 1;
    if (outcome.recorded) this.recorded += 1;
    if (!outcome.stopped || !outcome.recorded) this.missed.push(name);
  }

  /** The line for the closing note. */
  line(
    labels: { stopped: string; recorded?: string } = { stopped: "stopped", recorded: "recorded" },
  ): string {
    const recorded = labels.recorded ? ` / ${this.recorded} ${labels.recorded}` : "";
    return `${this.kind}: ${this.tried} tried / ${this.stopped} ${labels.stopped}${recorded}` +
      (this.missed.length ? ` (missed: ${this.missed.join(", ")})` : "");
  }
}
