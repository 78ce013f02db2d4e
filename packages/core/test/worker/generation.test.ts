import { afterEach, describe, expect, it } from 'vitest';
import type { PreparedModel } from '../../src/contracts/engine.js';
import type { GenerationSchedule, GenerationTrace } from '../../src/contracts/generation.js';
import type { TensorMap } from '../../src/contracts/tensor.js';
import { runGenerationLoop, scoreTextWith } from '../../src/harness/generate/lm-loop.js';
import { WorkerReplyError } from '../../src/worker/errors.js';
import { fixtureEngine } from './helpers.js';

const CACHE = [1, 1, 8, 1];
const engine = fixtureEngine('scripted-lm');

const prepared: PreparedModel[] = [];
afterEach(async () => {
  await Promise.all(prepared.splice(0).map((m) => m.dispose()));
});

async function scripted(): Promise<PreparedModel> {
  const model = await engine.prepare({
    model: { name: 'scripted', path: '/models/scripted.onnx', workDir: '/tmp/pbh-scripted-lm' },
    batchSize: 1,
    device: 'cpu',
    options: {},
    inputs: [
      { name: 'input_ids', dtype: 'int64', shape: [1, 'sequence'] },
      { name: 'past_length', dtype: 'int64', shape: [1] },
      { name: 'past_key', dtype: 'float32', shape: CACHE },
      { name: 'past_value', dtype: 'float32', shape: CACHE },
    ],
    seed: 0,
    precision: 'fp32',
    process: 'worker',
  });
  prepared.push(model);
  return model;
}

/** Every (request, token) in the order the loop produced them: the schedule's interleaving, clock aside. */
function order(traces: GenerationTrace[]): string[] {
  return traces
    .flatMap((t, r) => t.tokenNs.map((ns, i) => ({ ns, key: `${r}:${i}` })))
    .sort((a, b) => a.ns - b.ns)
    .map((x) => x.key);
}

describe('generation in the worker (protocol 5)', () => {
  it('runs the same schedule as the harness loop: the same tokens in the same interleaving, arrivals kept', async () => {
    const model = await scripted();
    const schedule: GenerationSchedule & { cacheShape: number[] } = { prompts: [[10, 11], [20, 21, 22], [30], [40, 41]], maxNewTokens: 4, arrivalsNs: null, concurrency: 2, cacheShape: CACHE };
    const inWorker = await model.generator!.generate(schedule);
    const inHarness = await runGenerationLoop(async (feeds: TensorMap) => (await model.sut.infer(feeds)).outputs, schedule);
    expect(inWorker.map((t) => t.tokens)).toEqual([[12, 13, 14, 15], [23, 24, 25, 26], [31, 32, 33, 34], [42, 43, 44, 45]]);
    expect(inHarness.map((t) => t.tokens)).toEqual(inWorker.map((t) => t.tokens));
    expect(order(inWorker)).toEqual(order(inHarness));
    const timed = await model.generator!.generate({ ...schedule, arrivalsNs: [0, 0, 20e6, 20e6] });
    expect(timed.map((t) => t.arrivalNs)).toEqual([0, 0, 20e6, 20e6]);
    expect(timed[2]!.tokenNs[0]!).toBeGreaterThanOrEqual(20e6);
  });

  it('scores text in windows in the worker as the harness does', async () => {
    const model = await scripted();
    // Scripted logits are 1 at last + 1 and 0 elsewhere: -ln p is ln(255 + e) - 1 where the next token is last + 1.
    const score = await model.generator!.scoreText!([1, 2, 3, 9, 10, 11, 12], 4, CACHE);
    expect(score.predicted).toBe(3 + 2);
    const hit = Math.log(255 + Math.E) - 1;
    const miss = Math.log(255 + Math.E);
    // Window [1,2,3,9]: 2 and 3 follow their predecessor, 9 does not; window [10,11,12]: both follow.
    expect(score.nllSum).toBeCloseTo(4 * hit + miss, 9);
    const inHarness = await scoreTextWith(async (feeds: TensorMap) => (await model.sut.infer(feeds)).outputs, [1, 2, 3, 9, 10, 11, 12], 4, CACHE);
    expect(inHarness.predicted).toBe(score.predicted);
    expect(inHarness.nllSum).toBeCloseTo(score.nllSum, 9);
  });

  it('refuses a generate request whose prompt tensors disagree', async () => {
    const model = await scripted();
    await expect(model.generator!.generate({ prompts: [[]], maxNewTokens: 2, arrivalsNs: null, concurrency: 1, cacheShape: CACHE })).rejects.toThrow(WorkerReplyError);
  });
});
