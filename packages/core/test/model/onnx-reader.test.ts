import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeModel } from '../../src/model/analyze.js';
import { tensorToNumbers } from '../../src/model/onnx-access.js';
import { decodeOnnxModel, OnnxFormatError, readOnnxModel } from '../../src/model/onnx-reader.js';
import { LIGHT_DIR, makeFixtures, type Fixtures } from './fixtures.js';

let fx: Fixtures;
beforeAll(async () => {
  fx = await makeFixtures();
});
afterAll(async () => {
  await fx?.cleanup();
});

describe('decodeOnnxModel', () => {
  it('reads model header, graph I/O, nodes and attributes', async () => {
    const { model } = await readOnnxModel(fx.model('convnet').file);
    expect(model.irVersion).toBe(8);
    expect(model.opsetImport).toEqual([{ domain: '', version: 13 }]);
    expect(model.producerName).toBe('pbh-fixtures');
    const g = model.graph;
    expect(g.name).toBe('convnet');
    expect(g.inputs).toEqual([{ name: 'x', type: { kind: 'tensor', elemType: 1, dtype: 'float32', shape: ['N', 3, 32, 32] } }]);
    expect(g.outputs[0]!.type).toEqual({ kind: 'tensor', elemType: 1, dtype: 'float32', shape: ['N', 10] });
    const conv2 = g.nodes.find((n) => n.name === 'conv2')!;
    expect(conv2.opType).toBe('Conv');
    expect(conv2.inputs).toEqual(['r1', 'W2']);
    expect(conv2.attributes['group']).toEqual({ name: 'group', type: 'int', value: 2 });
    expect(conv2.attributes['pads']).toEqual({ name: 'pads', type: 'ints', value: [1, 1, 1, 1] });
    const avg = g.nodes.find((n) => n.name === 'avgpool')!;
    expect(avg.attributes['auto_pad']).toEqual({ name: 'auto_pad', type: 'string', value: 'SAME_UPPER' });
    const hi = g.nodes.find((n) => n.outputs[0] === 'hi')!;
    const t = hi.attributes['value'];
    expect(t?.type).toBe('tensor');
    if (t?.type === 'tensor') expect(tensorToNumbers(t.value)).toEqual([6]);
  });

  it('reads raw_data and float_data initializers to the same values numpy wrote', async () => {
    const { model } = await readOnnxModel(fx.model('convnet').file);
    const byName = new Map(model.graph.initializers.map((t) => [t.name, t]));
    const w1 = byName.get('W1')!;
    expect(w1.dims).toEqual([8, 3, 3, 3]);
    expect(w1.rawData?.byteLength).toBe(8 * 3 * 3 * 3 * 4);
    const b1 = byName.get('B1')!;
    expect(b1.rawData).toBeNull();
    expect(b1.floatData?.length).toBe(8);
    const wg = byName.get('Wg')!;
    expect(wg.floatData?.length).toBe(80);
    expect(tensorToNumbers(byName.get('bn_v')!)!.every((v) => v >= 1)).toBe(true);
  });

  it('decodes signed int64 initializers (Reshape shapes with -1)', async () => {
    const { model } = await readOnnxModel(fx.model('reshape_ops').file);
    const t = model.graph.initializers.find((i) => i.name === 'shape02m1')!;
    expect(tensorToNumbers(t)).toEqual([0, 2, -1]);
  });

  it('reports external-data tensors without loading them', async () => {
    const m = fx.model('convnet_external');
    const { model } = await readOnnxModel(m.file);
    const ext = model.graph.initializers.filter((t) => t.external);
    expect(ext.map((t) => t.name).sort()).toEqual([...m.external!].sort());
    for (const t of ext) {
      expect(t.external!.location).toBe('convnet_external.data');
      expect(t.external!.length).toBeGreaterThan(0);
      expect(t.rawData).toBeNull();
    }
    const a = await analyzeModel(m.file);
    expect(a.externalData.map((e) => e.tensor).sort()).toEqual([...m.external!].sort());
    expect(a.parameters).toBe(m.params);
    expect(a.sparsity.perTensor.map((t) => t.name).sort()).toEqual(['Wg']);
    expect(a.warnings.some((w) => w.includes('W1') && w.includes('external'))).toBe(true);
  });

  it('reads the IR 3 light models, where weights are graph inputs too', async () => {
    const { model } = await readOnnxModel(join(LIGHT_DIR, 'light_resnet50.onnx'));
    expect(model.irVersion).toBe(3);
    expect(model.graph.nodes.length).toBe(415);
    const a = await analyzeModel(join(LIGHT_DIR, 'light_resnet50.onnx'));
    expect(a.inputs).toEqual([{ name: 'gpu_0/data_0', dtype: 'float32', shape: [1, 3, 224, 224] }]);
  });
});

describe('not an ONNX model', () => {
  const write = async (name: string, bytes: Uint8Array | string): Promise<string> => {
    const p = join(fx.dir, name);
    await writeFile(p, bytes);
    return p;
  };

  const expectRejected = async (path: string, why: RegExp): Promise<void> => {
    const err = await analyzeModel(path).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OnnxFormatError);
    const msg = (err as Error).message;
    expect(msg.startsWith(`${path} is not an ONNX model: `)).toBe(true);
    expect(msg).toMatch(why);
    expect(msg).toMatch(/Pass a \.onnx file exported with torch\.onnx\.export/);
  };

  it('an empty file', async () => {
    await expectRejected(await write('empty.onnx', new Uint8Array(0)), /the file is empty/);
  });

  it('a text file', async () => {
    await expectRejected(await write('notes.onnx', 'hello, this is not a model\nsecond line\n'), /text file \(it starts with "hello, this is not a model"\)/);
  });

  it('ONNX text format', async () => {
    await expectRejected(await write('model.onnxtxt', 'ir_version: 8\ngraph {\n}\n'), /protobuf text format/);
  });

  it('a PNG image', async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    await expectRejected(await write('image.png', png), /PNG image/);
  });

  it('a zip archive (PyTorch checkpoint)', async () => {
    await expectRejected(await write('model.pt', new Uint8Array([0x50, 0x4b, 0x03, 0x04, 1, 2, 3, 4])), /ZIP archive/);
  });

  it('a truncated model', async () => {
    const bytes = await readFile(fx.model('convnet').file);
    await expectRejected(await write('truncated.onnx', bytes.subarray(0, Math.floor(bytes.length * 0.6))), /truncated/);
  });

  it('binary that is not protobuf', async () => {
    // Field 1 with wire type 7 does not exist in protobuf.
    await expectRejected(await write('garbage.bin', new Uint8Array([0x0f, 0x01, 0x02, 0x03])), /do not parse as a protobuf ModelProto/);
  });

  it('protobuf that is not a ModelProto', async () => {
    // Field 2 (producer_name) only: valid protobuf, no ir_version, no graph.
    const bytes = new Uint8Array([0x12, 0x03, 0x61, 0x62, 0x63]);
    expect(() => decodeOnnxModel(bytes, 'x.onnx')).toThrow(/x.onnx is not an ONNX model: .*no ir_version/);
  });

  it('a missing file keeps the filesystem error', async () => {
    await expect(analyzeModel(join(fx.dir, 'nope.onnx'))).rejects.toThrow(/ENOENT/);
  });
});
