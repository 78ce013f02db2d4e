import { describe, expect, it } from 'vitest';
import { ConfigError, experimentJsonSchema, parseExperiment } from '../src/config/load.js';
import { expandCells } from '../src/config/keys.js';

const BASE = `
name: t
dataset: { kind: npy, inputs: { input: x.npy } }
models: [{ name: m, path: m.onnx }]
engines: [{ name: onnxruntime }, { name: openvino }]
batch_sizes: [1, 8]
`;

describe('experiment config', () => {
  it('applies defaults and expands the sweep with deterministic keys', () => {
    const a = parseExperiment(BASE, 'a.yaml');
    expect(a.experiment.sessions).toBe(5);
    expect(a.experiment.warmup_batches).toBe(5);
    expect(a.experiment.reference_engine).toBe('onnxruntime');
    const cells = expandCells(a.experiment);
    expect(cells).toHaveLength(4);
    expect(new Set(cells.map((c) => c.key)).size).toBe(4);
    const again = expandCells(parseExperiment(BASE, 'b.yaml').experiment);
    expect(again.map((c) => c.key)).toEqual(cells.map((c) => c.key));
    const changed = expandCells(parseExperiment(`${BASE}\nsessions: 2\n`, 'c.yaml').experiment);
    expect(changed[0]!.key).not.toBe(cells[0]!.key);
  });

  it('refuses two entries that give one cell, and keeps labelled twins apart', () => {
    const twins = BASE.replace('engines: [{ name: onnxruntime }, { name: openvino }]', 'engines: [{ name: onnxruntime }, { name: onnxruntime }]');
    expect(() => parseExperiment(twins, 'twins.yaml')).toThrowError(
      /twins\.yaml[\s\S]*models\[m\] x engines\[1\] \(onnxruntime\) x batch 1 is the same cell as models\[m\] x engines\[0\] \(onnxruntime\) x batch 1.*different labels/,
    );
    const labelled = BASE.replace('engines: [{ name: onnxruntime }, { name: openvino }]', 'engines: [{ name: onnxruntime, label: a }, { name: onnxruntime, label: b }]');
    const cells = expandCells(parseExperiment(labelled, 'labelled.yaml').experiment);
    expect(new Set(cells.map((c) => c.key)).size).toBe(4);
    expect(cells.map((c) => c.engineLabel)).toEqual(['a', 'a', 'b', 'b']);
  });

  it('accepts only numbers the store can hold', () => {
    for (const [field, value] of [['sessions', 3e9], ['warmup_batches', 1e12], ['seed', 2 ** 53 - 1], ['batch_sizes', [5e9]], ['timeout_s', 1e10]] as const) {
      expect(() => parseExperiment(`${BASE}\n${field}: ${JSON.stringify(value)}\n`, 'big.yaml'), field).toThrowError(new RegExp(`big\\.yaml[\\s\\S]*${field}`));
    }
  });

  it('names an unknown key with a did-you-mean', () => {
    expect(() => parseExperiment(`${BASE}\nbatch_size: [4]\n`, 'typo.yaml')).toThrowError(
      /typo\.yaml[\s\S]*batch_size: unknown key "batch_size" \(did you mean "batch_sizes"\?\)/,
    );
    const nested = `${BASE.replace('path: m.onnx', 'path: m.onnx, framwork: torch')}`;
    expect(() => parseExperiment(nested, 'n.yaml')).toThrowError(/models\[0\]\.framwork: unknown key "framwork" \(did you mean "framework"\?\)/);
  });

  it('reports wrong types with the field path and rejects non-mappings', () => {
    try {
      parseExperiment(BASE.replace('[1, 8]', '"eight"'), 'bad.yaml');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as Error).message).toMatch(/batch_sizes/);
    }
    expect(() => parseExperiment('- 1\n- 2\n', 'list.yaml')).toThrowError(/one mapping/);
    expect(() => parseExperiment('name: [', 'broken.yaml')).toThrowError(/cannot parse YAML/);
  });

  it('generates a JSON Schema that lists every top-level field', () => {
    const schema = experimentJsonSchema() as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['models', 'dataset', 'engines', 'batch_sizes', 'timeout_s', 'scorers']));
    expect(schema.required).toEqual(expect.arrayContaining(['name', 'models', 'engines', 'batch_sizes']));
  });
});

describe('exclude', () => {
  it('drops exactly the cells that match every given field', () => {
    const exp = parseExperiment(`${BASE}\nexclude:\n  - { model: m, engine: openvino, batch_size: 8 }\n  - { engine: nothing }\n`, 'x.yaml').experiment;
    const cells = expandCells(exp).map((c) => `${c.engine.name}/${c.batchSize}`);
    expect(cells).toEqual(['onnxruntime/1', 'onnxruntime/8', 'openvino/1']);
  });
});
