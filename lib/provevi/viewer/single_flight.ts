/**
 * Requests that ask the same thing at the same time share one answer: ten tabs that open the same large run
 * at once check it once, not ten times, and hold one copy of its page.
 * @module
 */

/** Calls that share one run while it is in flight, by key; nothing is kept after it settles. */
export class SingleFlight<T> {
  readonly #running = new Map<string, Promise<T>>();

  /**
   * Runs `fn` for `key`, or joins the run already in flight for it.
   *
   * @param key What is asked, whole (every option that changes the answer is in it).
   * @param fn Makes the answer.
   * @returns The answer.
   */
  run(key: string, fn: () => Promise<T>): Promise<T> {
    const running = this.#running.get(key);
    if (running) return running;
    const started = fn().finally(() => this.#running.delete(key));
    this.#running.set(key, started);
    return started;
  }
}
