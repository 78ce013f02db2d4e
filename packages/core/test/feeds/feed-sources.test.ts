import { describe, expect, it } from 'vitest';
import type { Dataset, RawBatch } from '../../src/contracts/dataset.js';
import type { ModelFacts } from '../../src/contracts/profile.js';
import type { Tensor, TensorSpec } from '../../src/contracts/tensor.js';
import { ModelSchema, type ModelConfig } from '../../src/config/schema.js';
import { bindInputs, describeSource } from '../../src/harness/feeds.js';
import { checkFit, concreteSpec } from '../../src/harness/fit.js';
import { halfToNumber } from '../../src/harness/half.js';

// A streaming model as silero-vad declares it: samples [batch, 512], state [2, batch, 128], a scalar sample rate.
const VAD: TensorSpec[] = [
  { name: 'input', dtype: 'float32', shape: ['batch', 512] },
  { name: 'state', dtype: 'float32', shape: [2, 'batch', 128] },
  { name: 'sr', dtype: 'int64', shape: [] },
];

function facts(inputs: TensorSpec[]): ModelFacts {
  return { inputs } as ModelFacts;
}

/** A dataset whose fields hold `rows` samples of the given per-sample shapes, each value its flat index. */
function dataset(fields: Record<string, number[]>): Dataset {
  return {
    name: 'd',
    inputNames: Object.keys(fields),
    read: (start: number, rows: number): RawBatch => ({
      count: rows,
      inputs: Object.fromEntries(
        Object.entries(fields).map(([f, sample]) => {
          const n = rows * sample.reduce((a, d) => a * d, 1);
          return [f, { dtype: 'float32', dims: [rows, ...sample], data: Float32Array.from({ length: n }, (_, i) => start * 1000 + i) } satisfies Tensor];
        }),
      ),
    }),
  } as unknown as Dataset;
}

const entry = (inputs: Record<string, unknown>): ModelConfig => ModelSchema.parse({ name: 'vad', path: 'vad.onnx', inputs });

describe('models[].inputs: what feeds each input', () => {
  it('feeds a dataset field, a constant scalar and zeros on the batch axis the state declares', () => {
    const f = bindInputs(entry({ input: 'chunk', state: { zeros: true }, sr: { constant: 16000, dtype: 'int64' } }), facts(VAD), dataset({ chunk: [512] }), []);
    expect(f.bindings.map((b) => [b.input.name, b.source.kind, b.batchAxis])).toEqual([
      ['input', 'field', 0],
      ['state', 'zeros', 1],
      ['sr', 'constant', null],
    ]);
    const feeds = f.feed(dataset({ chunk: [512] }).read(0, 3));
    expect(feeds.input!.dims).toEqual([3, 512]);
    expect(feeds.state!.dims).toEqual([2, 3, 128]);
    expect([...feeds.state!.data].every((v) => v === 0)).toBe(true);
    expect(feeds.sr).toMatchObject({ dtype: 'int64', dims: [] });
    expect(feeds.sr!.data[0]).toBe(16000n);
  });

  it('moves a field stacked on axis 0 to the batch axis the config names', () => {
    const f = bindInputs(entry({ input: 'chunk', state: { field: 'st', batch_axis: 1 }, sr: { constant: 8000, dtype: 'int64' } }), facts(VAD), dataset({ chunk: [512], st: [2, 128] }), []);
    const feeds = f.feed(dataset({ chunk: [512], st: [2, 128] }).read(0, 3));
    const st = feeds.state!;
    expect(st.dims).toEqual([2, 3, 128]);
    // Sample r's row k (flat r*256 + k*128 + j in the dataset) lands at [k, r, j].
    for (const [k, r, j] of [[0, 0, 0], [1, 0, 5], [0, 2, 127], [1, 2, 3]] as const) {
      expect(st.data[(k * 3 + r) * 128 + j]).toBe(r * 256 + k * 128 + j);
    }
  });

  it('takes constants as nested arrays, in float16 too', () => {
    const spec: TensorSpec[] = [{ name: 'x', dtype: 'float32', shape: ['n', 2] }, { name: 'scale', dtype: 'float16', shape: [2, 2] }];
    const f = bindInputs(ModelSchema.parse({ name: 'm', path: 'm.onnx', inputs: { scale: { constant: [[0.5, 1], [2, -3]], dtype: 'float16' } } }), facts(spec), dataset({ x: [2] }), []);
    const t = f.feed(dataset({ x: [2] }).read(0, 1)).scale!;
    expect(t.dims).toEqual([2, 2]);
    expect([...(t.data as Uint16Array)].map(halfToNumber)).toEqual([0.5, 1, 2, -3]);
    expect(() => ModelSchema.parse({ name: 'm', path: 'm.onnx', inputs: { scale: { constant: [[1, 2], [3]], dtype: 'float32' } } })).not.toThrow();
    expect(() => bindInputs(ModelSchema.parse({ name: 'm', path: 'm.onnx', inputs: { scale: { constant: [[1, 2], [3]], dtype: 'float32' } } }), facts(spec), dataset({ x: [2] }), [])).toThrow(
      /models\[m\]\.inputs\.scale: the nested arrays are not rectangular/,
    );
  });

  it('asks for the size of an axis the model leaves open before feeding zeros', () => {
    const spec: TensorSpec[] = [{ name: 'x', dtype: 'float32', shape: ['batch', 4] }, { name: 'cache', dtype: 'float32', shape: ['batch', 'seq', 8] }];
    expect(() => bindInputs(entry({ cache: { zeros: true } }), facts(spec), dataset({ x: [4] }), [])).toThrow(
      /models\[vad\]\.inputs\.cache: input "cache" \[batch, seq, 8\] leaves axis 1 open; give its size: models\[vad\]\.inputs\.cache: \{ zeros: true, shape: \['batch', N, 8\] \}/,
    );
    const f = bindInputs(entry({ cache: { zeros: true, shape: ['batch', 16, 8] } }), facts(spec), dataset({ x: [4] }), []);
    expect(f.feed(dataset({ x: [4] }).read(0, 2)).cache!.dims).toEqual([2, 16, 8]);
    // A declared size too large to allocate is refused naming the input, before any allocation.
    const huge: TensorSpec[] = [spec[0]!, { name: 'cache', dtype: 'float32', shape: ['batch', 2 ** 31] }];
    expect(() => bindInputs(entry({ cache: { zeros: true } }), facts(huge), dataset({ x: [4] }), [])).toThrow(
      /models\[vad\]\.inputs\.cache: zeros of \[batch, 2147483648\] float32 for input "cache" are 8\.0 GiB a sample/,
    );
  });

  it('names the input, the shape it takes and the config line that fixes it when a state is fed on axis 0', () => {
    const f = bindInputs(entry({ input: 'chunk', state: 'st', sr: { constant: 16000, dtype: 'int64' } }), facts(VAD), dataset({ chunk: [512], st: [2, 128] }), []);
    const state = f.bindings.find((b) => b.input.name === 'state')!;
    expect(state.batchAxis).toBe(1);
    // A config that says axis 0 explicitly gets the hint.
    const wrong = bindInputs(entry({ input: 'chunk', state: { field: 'st', batch_axis: 0 }, sr: { constant: 16000, dtype: 'int64' } }), facts(VAD), dataset({ chunk: [512], st: [2, 128] }), []);
    const b = wrong.bindings.find((x) => x.input.name === 'state')!;
    const x = wrong.feed(dataset({ chunk: [512], st: [2, 128] }).read(0, 1)).state!;
    expect(() => checkFit(x, b.input, 1, 'model "vad"', { where: describeSource(b, 'd', []), configLine: b.configLine, batchAxis: b.batchAxis, fromDataset: true })).toThrow(
      /dataset d field "st" \(fed as stored\) has shape \[1, 2, 128\] but model "vad" input "state" takes \[2, batch, 128\] \(here \[2, 1, 128\]\)\. Its samples lie on axis 1: set models\[vad\]\.inputs\.state: \{ field: st, batch_axis: 1 \}, or, for a recurrent state at its start, \{ zeros: true \}/,
    );
    expect(concreteSpec(b.input, 4, undefined, 1).shape).toEqual([2, 4, 128]);
  });

  it('says how to feed an input that has no data', () => {
    expect(() => bindInputs(entry({ input: 'chunk' }), facts(VAD), dataset({ chunk: [512] }), [])).toThrow(
      /model "vad" input "state" \(float32 \[2, batch, 128\]\) has no data.*models\[vad\]\.inputs\.state: FIELD \(a dataset field\), \{ constant: VALUE, dtype: float32 \}.*\{ zeros: true \}/,
    );
  });
});
