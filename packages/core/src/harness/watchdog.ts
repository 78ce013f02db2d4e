import { Worker } from 'node:worker_threads';

/**
 * How long past its timeout a cell may keep the harness's thread before the watchdog ends the process. A cell whose
 * thread is free ends at its deadline; this only catches an in-process engine that blocks the thread (a busy loop
 * in predict), which no timer on that thread can interrupt.
 */
export const WATCHDOG_GRACE_MS = 5_000;

// Plain CommonJS for `eval: true`: the thread must not depend on the harness's modules, only on Node's.
const SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
let timer;
parentPort.on('message', (m) => {
  clearTimeout(timer);
  if (m.kind !== 'arm') return;
  timer = setTimeout(() => {
    try {
      fs.mkdirSync(path.dirname(m.file), { recursive: true });
      fs.writeFileSync(m.file, m.profileJson);
    } finally {
      fs.writeSync(2, m.message + '\\n');
      process.kill(process.pid, 'SIGKILL');
    }
  }, Math.max(0, m.at - Date.now()));
});
`;

/** A thread beside the harness's that ends the process when a cell holds the harness thread past its deadline. */
export class Watchdog {
  private readonly worker = new Worker(SOURCE, { eval: true });

  constructor() {
    // The watchdog never keeps a finished sweep alive.
    this.worker.unref();
  }

  /** From now until disarm(), a cell still running at `at` (epoch ms) has `profileJson` written to `file`, then the process is killed. */
  arm(at: number, file: string, profileJson: string, message: string): void {
    this.worker.postMessage({ kind: 'arm', at, file, profileJson, message });
  }

  disarm(): void {
    this.worker.postMessage({ kind: 'disarm' });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
