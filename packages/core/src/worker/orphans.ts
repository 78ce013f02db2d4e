/**
 * Every live worker process of this Node process, so none outlives it however it ends: normal exit,
 * process.exit(), SIGINT/SIGTERM/SIGHUP, or an uncaught exception. The kills are synchronous SIGKILLs because
 * an 'exit' listener cannot wait. (Workers also exit on their own when stdin closes and ask the kernel
 * for SIGKILL when their parent dies; this set covers the cases where the parent still runs its handlers.)
 */
export interface Killable {
  killNow(): void;
}

const live = new Set<Killable>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const hookedSignals = new Set<NodeJS.Signals>();
let exitHooked = false;

export function killAllWorkers(): void {
  for (const worker of live) worker.killNow();
  live.clear();
}

export function liveWorkerCount(): number {
  return live.size;
}

export function trackWorker(worker: Killable): void {
  live.add(worker);
  hookProcess();
}

export function untrackWorker(worker: Killable): void {
  live.delete(worker);
}

function hookProcess(): void {
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', killAllWorkers);
    // The monitor variant observes without changing how Node handles the exception.
    process.on('uncaughtExceptionMonitor', killAllWorkers);
  }
  for (const signal of SIGNALS) {
    if (hookedSignals.has(signal)) continue;
    hookedSignals.add(signal);
    const onSignal = (): void => {
      killAllWorkers();
      process.removeListener(signal, onSignal);
      hookedSignals.delete(signal);
      // Listening to a signal disables Node's default "terminate"; restore it when nobody else handles the signal.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    // Prepended so we run before execa's signal-exit, which re-raises the signal only when it is the last listener.
    process.prependListener(signal, onSignal);
  }
}
