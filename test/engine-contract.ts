import { expect } from 'vitest';
import type { Engine, PreparedModel } from '@pbh/core';

/**
 * Every engine must move float32/int32 inputs and float32/bool/int64 outputs of one model through predict
 * (test/fixtures/make_models.py writes mixed_io.onnx), in the given process. Returns the prepared model for the caller to dispose.
 */
export async function expectMixedIoRoundTrip(engine: Engine, options: Record<string, unknown>, mixedIo: string, workDir: string, process = engine.processes[0]!): Promise<PreparedModel> {
  const model = await engine.prepare({
    model: { name: 'mixed_io', path: mixedIo, workDir },
    batchSize: 2,
    device: 'cpu',
    options,
    inputs: [
      { name: 'a', dtype: 'float32', shape: [2, 3] },
      { name: 'b', dtype: 'int32', shape: [2, 3] },
    ],
    seed: 0,
    precision: 'fp32',
    process,
  });
  try {
    expect(model.outputs.map((o) => [o.name, o.dtype, o.shape])).toEqual([
      ['sum', 'float32', [2, 3]],
      ['positive', 'bool', [2, 3]],
      ['count', 'int64', [2, 3]],
    ]);
    const { outputs } = await model.sut.infer({
      a: { dtype: 'float32', dims: [2, 3], data: new Float32Array([-1, 0.5, 2, 3, -4, 0]) },
      b: { dtype: 'int32', dims: [2, 3], data: new Int32Array([1, 2, 3, -4, 5, 6]) },
    });
    expect(Array.from(outputs.sum!.data as Float32Array)).toEqual([0, 2.5, 5, -1, 1, 6]);
    expect(Array.from(outputs.positive!.data as Uint8Array)).toEqual([0, 1, 1, 1, 0, 0]);
    expect(Array.from(outputs.count!.data as BigInt64Array)).toEqual([2n, 4n, 6n, -8n, 10n, 12n]);
  } catch (e) {
    await model.dispose();
    throw e;
  }
  return model;
}
