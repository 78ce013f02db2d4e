import { z } from 'zod';
import type { Engine, PrepareRequest, PreparedModel } from '../../src/contracts/engine.js';
import type { ExecutedPrecision, Precision } from '../../src/contracts/precision.js';
import type { TensorMap } from '../../src/contracts/tensor.js';

/** What a fake engine does, call by call: the harness tests script service times, failures, hangs and wrong answers. */
export interface FakeScript {
  /** Wall time each predict takes, held by a busy wait on the harness's clock so the boundaries must contain it. */
  serviceMs?: number;
  /** Engine time each predict reports; unset reports none. */
  engineNs?: bigint;
  /** Added to every logit: a wrong answer for the correctness gate. */
  offset?: number;
  /** 1-based predict call that never settles, or 'prepare'. */
  hangAt?: number | 'prepare';
  /** 1-based predict call that throws, or 'prepare'. */
  failAt?: number | 'prepare';
  available?: boolean;
  precisions?: Precision[];
  /** What the prepared model reports it executes; unset reports the requested precision, read back. */
  executed?: ExecutedPrecision | null;
  threads?: number;
  /** Runs "in a worker": reports a pid (this process's, so metrics can read it). */
  worker?: boolean;
  bench?: boolean;
  /** Takes resident samples (as native workers do): runs are timed "in the runtime", engineNs = engineNs or 1000. */
  resident?: boolean;
  /** Also runs whole sessions "in the runtime" (runClosedLoop), as native workers do. */
  closedLoop?: boolean;
  acceptsSmallerBatch?: boolean;
}

export interface FakeCalls {
  prepares: PrepareRequest[];
  predicts: number;
  /** Rows of every predict call, in order. */
  rows: number[];
  residentRuns: number;
  closedLoops: number;
  loaded: TensorMap[][];
  lastFeeds?: TensorMap;
  disposes: number;
}

export const CLASSES = 10;

/** Deterministic logits from the input: class c scores (c + 1) x mean(sample), plus the scripted offset. */
export function fakeLogits(batch: TensorMap, offset = 0): TensorMap {
  const x = Object.values(batch)[0]!;
  const n = x.dims[0]!;
  const per = x.data.length / n;
  const out = new Float32Array(n * CLASSES);
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let j = 0; j < per; j++) sum += Number(x.data[i * per + j]);
    for (let c = 0; c < CLASSES; c++) out[i * CLASSES + c] = ((c + 1) * sum) / per + offset;
  }
  return { logits: { dtype: 'float32', dims: [n, CLASSES], data: out } };
}

const never = (): Promise<never> => new Promise(() => undefined);
/** Holds the thread for exactly `ms` by the harness's own clock (a timer may fire early by the loop's cached time). */
async function serve(ms: number): Promise<void> {
  const end = process.hrtime.bigint() + BigInt(Math.round(ms * 1e6));
  while (process.hrtime.bigint() < end);
}

export function fakeEngine(name: string, script: FakeScript = {}): Engine & { calls: FakeCalls } {
  const calls: FakeCalls = { prepares: [], predicts: 0, rows: [], residentRuns: 0, closedLoops: 0, loaded: [], disposes: 0 };
  return {
    name,
    description: `in-memory fake engine ${name} (harness tests)`,
    optionsSchema: z.strictObject({ knob: z.number().default(1) }),
    devices: ['cpu'],
    precisions: script.precisions ?? ['fp32'],
    calls,
    async probe() {
      return script.available === false
        ? { available: false, reason: `${name} is scripted unavailable`, fix: 'nothing to fix: a test' }
        : { available: true, version: '0.0-fake', devices: ['cpu'] };
    },
    async prepare(req: PrepareRequest): Promise<PreparedModel> {
      calls.prepares.push(req);
      if (script.hangAt === 'prepare') await never();
      if (script.failAt === 'prepare') throw new Error(`${name}: scripted compile failure`);
      const executed = script.executed === undefined ? { executed: req.precision, evidence: 'fake: as requested' } : script.executed;
      const model: PreparedModel = {
        inputs: req.inputs,
        outputs: [{ name: 'logits', dtype: 'float32', shape: [req.batchSize, CLASSES] }],
        compileMs: 1,
        facts: { fake: true },
        threads: script.threads ?? null,
        ...(executed ? { precision: executed } : {}),
        async predict(batch) {
          calls.predicts++;
          calls.lastFeeds = batch;
          calls.rows.push(Object.values(batch)[0]!.dims[0]!);
          if (script.hangAt === calls.predicts) await never();
          if (script.failAt === calls.predicts) throw new Error(`${name}: scripted failure at predict ${calls.predicts}`);
          if (script.serviceMs) await serve(script.serviceMs);
          return { outputs: fakeLogits(batch, script.offset), ...(script.engineNs !== undefined ? { engineNs: script.engineNs } : {}) };
        },
        async dispose() {
          calls.disposes++;
        },
      };
      if (script.worker) model.pid = () => process.pid;
      if (script.acceptsSmallerBatch) model.acceptsSmallerBatch = true;
      if (script.resident) {
        model.loadResident = async (batches) => void calls.loaded.push(batches);
        model.runResident = async () => {
          calls.residentRuns++;
          if (script.serviceMs) await serve(script.serviceMs);
          return { engineNs: script.engineNs ?? 1000n };
        };
      }
      if (script.closedLoop) {
        model.runClosedLoop = async ({ batches, minQueries }) => {
          calls.closedLoops++;
          const n = Math.max(batches, minQueries);
          return { engineNs: new Array<number>(n).fill(Number(script.engineNs ?? 1000n)), wallNs: n * Number(script.engineNs ?? 1000n) };
        };
      }
      if (script.bench) model.bench = async (_batch, iterations) => ({ iterationNs: Array.from({ length: iterations }, () => 500) });
      return model;
    },
  };
}
