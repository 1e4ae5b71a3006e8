/**
 * The waits of a gateway's calls, under one timer for them all: how long a provider may take to answer, then to
 * send each next chunk. A call that stays silent past its wait is aborted with a `ProviderTimeout`; when the
 * gateway closes, every call under way is aborted. The one timer is armed for the earliest deadline and moved
 * only when a call's deadline comes before it, so a call arms no timer of its own and a chunk only notes the time:
 * arming and clearing a timer per call and a listener on the gateway's closing were a measured part of the time
 * to a stream's first token, which every call waits for.
 * @module
 */

/** Why a call was cut: the provider stayed silent past its wait. */
export class Silence extends Error {
  /**
   * @param what What the provider sent meanwhile (`no answer`, `nothing more`).
   * @param ms The wait, in milliseconds.
   */
  constructor(what: string, ms: number) {
    super(`the provider sent ${what} for ${Math.round(ms / 1000)} s; the gateway stopped waiting`);
    this.name = "ProviderTimeout";
  }
}

/** One call's wait: for the answer, then for each next chunk. */
export class CallWait {
  /** The call's controller, aborted when the provider stays silent or the gateway closes. */
  readonly controller: AbortController;
  /** What the provider sent meanwhile, for the error. */
  what = "no answer";
  /** How long the provider may stay silent now. */
  ms: number;
  /** When the provider last sent something (or the call began). */
  last = performance.now();
  readonly #idleMs: number;
  readonly #watch: CallWatch;

  /**
   * @param watch The gateway's watch.
   * @param call The call's controller and its waits.
   */
  constructor(
    watch: CallWatch,
    call: { controller: AbortController; firstByteMs: number; idleMs: number },
  ) {
    this.#watch = watch;
    this.controller = call.controller;
    this.ms = call.firstByteMs;
    this.#idleMs = call.idleMs;
  }

  /** The answer came, or a chunk of it: the next wait is for more. */
  touch(): void {
    this.last = performance.now();
    this.what = "nothing more";
    this.ms = this.#idleMs;
    this.#watch.due(this.last + this.ms);
  }

  /** The call no longer waits (its answer is read, or it was cut). */
  stop(): void {
    this.#watch.drop(this);
  }
}

/** The waits of one gateway's calls, and their end when it closes. */
export class CallWatch {
  readonly #waits = new Set<CallWait>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  #due = Infinity;
  #closed = false;

  /**
   * Starts a call's wait for its answer.
   *
   * @param call The call's controller and its waits (for the answer, then between chunks).
   * @returns The call's wait; a gateway that closed aborts it at once.
   */
  start(call: { controller: AbortController; firstByteMs: number; idleMs: number }): CallWait {
    const wait = new CallWait(this, call);
    if (this.#closed) {
      call.controller.abort(new Error("the run ended"));
      return wait;
    }
    this.#waits.add(wait);
    this.due(wait.last + wait.ms);
    return wait;
  }

  /** Makes sure the timer fires by a call's deadline (a time of `performance.now()`). */
  due(deadline: number): void {
    if (deadline >= this.#due || this.#closed) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#due = deadline;
    this.#timer = setTimeout(() => this.#check(), Math.max(0, deadline - performance.now()));
  }

  /** Forgets a call's wait. */
  drop(wait: CallWait): void {
    this.#waits.delete(wait);
  }

  /** Aborts every call silent past its wait, and arms the timer for the next deadline. */
  #check(): void {
    this.#timer = null;
    this.#due = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const wait of this.#waits) {
      const deadline = wait.last + wait.ms;
      if (deadline > now) next = Math.min(next, deadline);
      else {
        this.#waits.delete(wait);
        wait.controller.abort(new Silence(wait.what, wait.ms));
      }
    }
    if (next !== Infinity) this.due(next);
  }

  /** Ends every call under way (`the run ended`) and any later one, and stops the timer. */
  close(): void {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    for (const wait of this.#waits) wait.controller.abort(new Error("the run ended"));
    this.#waits.clear();
  }
}
