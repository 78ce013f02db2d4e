import { hrtimeClock, type Clock } from '../contracts/clock.js';
import type { ClosedLoopTimings, PredictResult, SampleLibrary, SystemUnderTest } from '../contracts/engine.js';
import type { TensorMap } from '../contracts/tensor.js';
import { checkClosedLoop, checkResident, checkSchedule } from './checks.js';
import { executeSchedule } from './executor.js';

/** What an engine whose runtime lives in the harness's process gives: one inference, and a pre-bound resident call. */
export interface InProcessRuntime {
  /**
   * The call that runs `batch` as a deployment serves a request, made once when the batch becomes resident (inputs
   * wrapped in the runtime's tensor type here, not per query). Its time is the `engine` boundary.
   */
  bind(batch: TensorMap): () => Promise<unknown>;
  infer(batch: TensorMap): Promise<PredictResult>;
}

export interface InProcessOptions {
  /** Names the engine in errors. */
  engine: string;
  maxConcurrency: number;
  clock?: Clock;
  /** The cell's abort: a session stops between queries once it aborts. */
  signal?: AbortSignal;
}

/**
 * The sample library and system under test of an in-process engine: the same closed loop and schedule a worker runs
 * in its own process, here on the harness's event loop, each query timed around its bound call.
 */
export function inProcessSystem(runtime: InProcessRuntime, options: InProcessOptions): { library: SampleLibrary; sut: SystemUnderTest } {
  const clock = options.clock ?? hrtimeClock;
  const { engine, signal } = options;
  let calls: (() => Promise<unknown>)[] = [];
  const library: SampleLibrary = {
    async load(batches) {
      calls = [];
      calls = batches.map((b) => runtime.bind(b));
    },
    async unload() {
      calls = [];
    },
  };
  const sut: SystemUnderTest = {
    async closedLoop(request): Promise<ClosedLoopTimings> {
      checkClosedLoop(request, calls.length, engine);
      const { batches, minQueries, minDurationNs } = request;
      const engineNs: number[] = [];
      const first = clock();
      let end = first;
      for (let q = 0; q < minQueries || q < batches || Number(end - first) < minDurationNs; q++) {
        signal?.throwIfAborted();
        const call = calls[q % batches]!;
        const start = clock();
        await call();
        end = clock();
        engineNs.push(Number(end - start));
      }
      return { engineNs, wallNs: Number(end - first) };
    },
    schedule(schedule) {
      checkSchedule(schedule, options.maxConcurrency, engine);
      checkResident('schedule', calls.length, Math.max(...schedule.batches) + 1, engine);
      return executeSchedule((b) => calls[b]!(), schedule, clock, signal);
    },
    async issue(index) {
      checkResident('issue', calls.length, index + 1, engine);
      const start = clock();
      await calls[index]!();
      return { engineNs: clock() - start };
    },
    infer: (batch) => runtime.infer(batch),
  };
  return { library, sut };
}
