import { CellTimeoutError, InterruptedError } from './errors.js';

/** Bounds every await of a cell by its timeout and by Ctrl-C; the loop also polls check() between batches. */
export class Deadline {
  private readonly endsAt: number;
  private interrupted: NodeJS.Signals | null = null;
  private readonly waiters = new Set<(e: Error) => void>();
  private readonly controller = new AbortController();
  private guard: Promise<never> | undefined;

  constructor(
    private readonly timeoutS: number,
    readonly label: string,
  ) {
    this.endsAt = Date.now() + timeoutS * 1000;
  }

  /** When the cell's time ends, epoch ms: the watchdog is armed for it, the rounds keep time before it for finishing. */
  get endsAtMs(): number {
    return this.endsAt;
  }

  /** Aborted once the cell is over its time or interrupted, so engines can stop work nobody will wait for. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  interrupt(signal: NodeJS.Signals = 'SIGINT'): void {
    this.interrupted = signal;
    const e = this.interruptedError();
    this.controller.abort(e);
    for (const w of this.waiters) w(e);
  }

  /**
   * Races a call on the timed path against the deadline. One guard (one timer) serves every call of the cell, so a
   * batch pays for a Promise.race and no timer: cheap enough to bound every predict, which a hung runtime needs.
   */
  race<T>(p: Promise<T>): Promise<T> {
    p.catch(() => undefined);
    if (!this.guard) {
      const guard = new Promise<never>((_, reject) => {
        this.waiters.add(reject);
        const timer = setTimeout(() => {
          const f = this.failure() ?? this.timeoutError();
          this.controller.abort(f);
          reject(f);
        }, Math.max(0, this.endsAt - Date.now()) + 1);
        timer.unref();
      });
      // Nobody may be racing when it fires; the rejection is seen through race(), never as unhandled.
      guard.catch(() => undefined);
      this.guard = guard;
    }
    return Promise.race([p, this.guard]);
  }

  private interruptedError(): InterruptedError {
    return new InterruptedError(`interrupted by ${this.interrupted === 'SIGINT' ? 'the user (SIGINT)' : this.interrupted} while this cell was running`);
  }

  private timeoutError(): CellTimeoutError {
    return new CellTimeoutError(`${this.label} ran past its timeout of ${this.timeoutS} s (timeout_s in the config)`);
  }

  private failure(): Error | undefined {
    if (this.interrupted) return this.interruptedError();
    if (Date.now() > this.endsAt) return this.timeoutError();
    return undefined;
  }

  check(): void {
    const f = this.failure();
    if (f) {
      this.controller.abort(f);
      throw f;
    }
  }

  /** Races a promise against the remaining time; the loser is abandoned, and the caller disposes the engine. */
  async run<T>(p: Promise<T>): Promise<T> {
    // A call the deadline abandons may still reject later (a worker killed on abort): that is expected, not unhandled.
    p.catch(() => undefined);
    this.check();
    let timer: NodeJS.Timeout | undefined;
    let reject: ((e: Error) => void) | undefined;
    const guard = new Promise<never>((_, rej) => {
      reject = rej;
      this.waiters.add(rej);
      timer = setTimeout(() => {
        const f = this.failure() ?? this.timeoutError();
        this.controller.abort(f);
        rej(f);
      }, Math.max(0, this.endsAt - Date.now()) + 1);
    });
    try {
      return await Promise.race([p, guard]);
    } finally {
      clearTimeout(timer);
      if (reject) this.waiters.delete(reject);
    }
  }
}
