import { z } from 'zod';
import type { Clock } from '../../src/contracts/clock.js';
import type { Engine, PrepareRequest, PreparedModel, QuerySchedule, ScheduleTimings } from '../../src/contracts/engine.js';
import type { ExecutedPrecision, Precision } from '../../src/contracts/precision.js';
import type { TensorMap } from '../../src/contracts/tensor.js';
import { inProcessSystem } from '../../src/engine-kit/in-process.js';

/**
 * The harness tests' clock: it moves only when a fake engine serves a query (by that query's service time), so
 * every timing a test reads is exact and nothing waits.
 */
export class FakeClock {
  private ns = 0n;
  readonly now: Clock = () => this.ns;
  advance(ns: number): void {
    this.ns += BigInt(Math.round(ns));
  }
}

export const fakeClock = new FakeClock();

/** What a fake engine does, call by call: the harness tests script service times, failures, hangs and wrong answers. */
export interface FakeScript {
  /** Time each query takes on the fake clock (the engine boundary); 1000 ns unless set. */
  serviceNs?: number;
  /** Time of the n-th query (1-based), where set: a machine whose speed changes while the rounds run. */
  serviceNsAt?: (query: number) => number;
  /** Each query's engine name is pushed here: the order contenders ran in. */
  log?: string[];
  /** Added to every logit: a wrong answer for the correctness gate. */
  offset?: number;
  /** 1-based query (inference or timed run, in order) that never settles, or 'prepare'. */
  hangAt?: number | 'prepare';
  /** 1-based query that throws, or 'prepare'. */
  failAt?: number | 'prepare';
  available?: boolean;
  precisions?: Precision[];
  /** What the prepared model reports it executes; unset reports the requested precision, read back; null: cannot tell. */
  executed?: ExecutedPrecision | null;
  threads?: number;
  /** Says it runs "in a worker" (this process's pid, so metrics can read it). */
  worker?: boolean;
  /** Declares the model-only probe (500 ns an iteration). */
  modelOnly?: boolean;
  acceptsSmallerBatch?: boolean;
  maxConcurrency?: number;
}

export interface FakeCalls {
  prepares: PrepareRequest[];
  /** Queries served, in order: inferences and timed runs alike. */
  queries: number;
  infers: number;
  /** Rows of every infer call, in order. */
  rows: number[];
  closedLoops: number;
  schedules: number;
  issues: number;
  loaded: TensorMap[][];
  unloads: number;
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

/** A FIFO queue of `concurrency` servers of a fixed service time on the fake clock: what an M/D/c queue does, exactly. */
function simulateSchedule(s: QuerySchedule, serviceNs: number, serve: () => Promise<void>, clock: FakeClock): Promise<ScheduleTimings> {
  const free = new Array<number>(s.concurrency).fill(0);
  const issuedNs: number[] = [];
  const completedNs: number[] = [];
  let lastIssue = 0;
  return (async () => {
    for (const arrival of s.arrivalsNs) {
      await serve();
      const server = free.indexOf(Math.min(...free));
      const issue = Math.max(arrival, free[server]!, lastIssue);
      lastIssue = issue;
      free[server] = issue + serviceNs;
      issuedNs.push(issue);
      completedNs.push(issue + serviceNs);
    }
    clock.advance(Math.max(0, Math.max(...completedNs) - s.arrivalsNs.length * serviceNs));
    return { issuedNs, completedNs };
  })();
}

export function fakeEngine(name: string, script: FakeScript = {}, clock: FakeClock = fakeClock): Engine & { calls: FakeCalls } {
  const calls: FakeCalls = { prepares: [], queries: 0, infers: 0, rows: [], closedLoops: 0, schedules: 0, issues: 0, loaded: [], unloads: 0, disposes: 0 };
  const serviceNs = script.serviceNs ?? 1000;
  /** One query: counted, maybe scripted to hang or fail, then served on the fake clock. */
  const serve = async (): Promise<void> => {
    calls.queries++;
    if (script.hangAt === calls.queries) await never();
    if (script.failAt === calls.queries) throw new Error(`${name}: scripted failure at query ${calls.queries}`);
    script.log?.push(name);
    clock.advance(script.serviceNsAt?.(calls.queries) ?? serviceNs);
  };
  return {
    name,
    description: `in-memory fake engine ${name} (harness tests)`,
    optionsSchema: z.strictObject({ knob: z.number().default(1) }),
    devices: ['cpu'],
    precisions: script.precisions ?? ['fp32'],
    processes: ['harness', 'worker'],
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
      const maxConcurrency = script.maxConcurrency ?? 1;
      const system = inProcessSystem(
        {
          bind: () => serve,
          async infer(batch) {
            calls.infers++;
            calls.lastFeeds = batch;
            calls.rows.push(Object.values(batch)[0]!.dims[0]!);
            await serve();
            return { outputs: fakeLogits(batch, script.offset), engineNs: BigInt(serviceNs) };
          },
        },
        { engine: name, maxConcurrency, clock: clock.now },
      );
      return {
        inputs: req.inputs,
        outputs: [{ name: 'logits', dtype: 'float32', shape: [req.batchSize, CLASSES] }],
        compileMs: 1,
        facts: { fake: true },
        threads: script.threads ?? null,
        precision: script.executed === undefined ? { executed: req.precision, evidence: 'fake: as requested' } : script.executed,
        runsIn: { process: script.worker ? 'worker' : 'harness', binding: 'fake', pid: process.pid },
        capabilities: { smallerBatch: script.acceptsSmallerBatch ?? false, maxConcurrency },
        library: {
          async load(batches) {
            calls.loaded.push(batches);
            await system.library.load(batches);
          },
          async unload() {
            calls.unloads++;
            await system.library.unload();
          },
        },
        sut: {
          closedLoop(request) {
            calls.closedLoops++;
            return system.sut.closedLoop(request);
          },
          schedule(schedule) {
            calls.schedules++;
            return simulateSchedule(schedule, serviceNs, serve, clock);
          },
          issue(index) {
            calls.issues++;
            return system.sut.issue(index);
          },
          infer: (batch) => system.sut.infer(batch),
        },
        probes: {
          modelOnly: script.modelOnly ? async (_batch, iterations) => ({ iterationNs: Array.from({ length: iterations }, () => 500) }) : null,
          layers: null,
          memory: async () => ({ rssBytes: process.memoryUsage.rss() }),
        },
        generator: null,
        diagnostics: () => '',
        async dispose() {
          calls.disposes++;
        },
      };
    },
  };
}
