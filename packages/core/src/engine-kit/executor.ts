import type { Clock } from '../contracts/clock.js';
import type { QuerySchedule, ScheduleTimings } from '../contracts/engine.js';

/**
 * Below this gap to the next arrival the executor yields (setImmediate) instead of arming a timer: Node's timers are
 * ms-granular and fire late under load, which would show as issue delay that no queue caused.
 */
const SPIN_BELOW_NS = 20e6;
/** Below this gap, with nothing in flight, the executor holds the thread (nothing else needs it) until the arrival. */
const HOLD_BELOW_NS = 200e3;

/**
 * The schedule executor of an in-process engine: issues each query when it is due with at most `concurrency` in
 * flight, FIFO, and records when each was issued and completed on `clock`. A query issued after its arrival (queued
 * behind others, or the executor late) shows as issue delay. Stops issuing once `signal` aborts.
 */
export function executeSchedule(query: (batch: number) => Promise<unknown>, s: QuerySchedule, clock: Clock, signal?: AbortSignal): Promise<ScheduleTimings> {
  const n = s.batches.length;
  const issuedNs = new Array<number>(n).fill(0);
  const completedNs = new Array<number>(n).fill(0);
  const start = clock();
  const elapsed = (): number => Number(clock() - start);
  return new Promise<ScheduleTimings>((resolve, reject) => {
    let next = 0;
    let inFlight = 0;
    let done = 0;
    let failed = false;
    let waiting: NodeJS.Timeout | NodeJS.Immediate | undefined;
    const fail = (e: unknown): void => {
      if (failed) return;
      failed = true;
      reject(e);
    };
    const pump = (): void => {
      waiting = undefined;
      if (failed) return;
      if (signal?.aborted) {
        fail(signal.reason);
        return;
      }
      while (next < n && inFlight < s.concurrency) {
        // Idle and the next arrival moments away: hold the thread until it is due, as a timer or a yield would be late.
        if (inFlight === 0) while (s.arrivalsNs[next]! > elapsed() && s.arrivalsNs[next]! - elapsed() < HOLD_BELOW_NS);
        if (s.arrivalsNs[next]! > elapsed()) break;
        const i = next++;
        inFlight++;
        issuedNs[i] = elapsed();
        query(s.batches[i]!).then(() => {
          completedNs[i] = elapsed();
          inFlight--;
          done++;
          if (done === n) resolve({ issuedNs, completedNs });
          else pump();
        }, fail);
      }
      if (next < n && inFlight < s.concurrency && waiting === undefined) {
        const gap = s.arrivalsNs[next]! - elapsed();
        waiting = gap < SPIN_BELOW_NS ? setImmediate(pump) : setTimeout(pump, Math.floor((gap - SPIN_BELOW_NS / 2) / 1e6));
      }
    };
    if (n === 0) resolve({ issuedNs, completedNs });
    else pump();
  });
}
