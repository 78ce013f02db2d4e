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

  it('expands a load sweep written as one entry into one labelled server entry per point', () => {
    const sweep = BASE.replace(
      'engines: [{ name: onnxruntime }, { name: openvino }]',
      'engines: [{ name: openai, label: ep, options: { base_url: "http://h/v1" }, scenario: { kind: server, max_concurrency: 4 }, sweep: { target_qps: [0.5, 2] } }, { name: openai, sweep: { max_concurrency: [1, 8] }, scenario: server }]',
    ).replace('batch_sizes: [1, 8]', 'batch_sizes: [1]\ngenerate: { max_new_tokens: 4 }');
    const { experiment } = parseExperiment(sweep, 's.yaml');
    expect(experiment.engines.map((e) => [e.label, e.scenario, e.sweep])).toEqual([
      ['ep 0.5 req/s', { kind: 'server', target_qps: 0.5, max_concurrency: 4 }, undefined],
      ['ep 2 req/s', { kind: 'server', target_qps: 2, max_concurrency: 4 }, undefined],
      ['openai 1 in flight', { kind: 'server', target_qps: 1e6, max_concurrency: 1 }, undefined],
      ['openai 8 in flight', { kind: 'server', target_qps: 1e6, max_concurrency: 8 }, undefined],
    ]);
    expect(experiment.engines[0]!.options).toEqual({ base_url: 'http://h/v1' });
    expect(new Set(expandCells(experiment).map((c) => c.key)).size).toBe(4);
    // An exclude naming the entry as written drops every point of it.
    const dropped = parseExperiment(`${sweep}\nexclude: [{ engine: ep, reason: later }]\n`, 'x.yaml').experiment;
    expect(expandCells(dropped).map((c) => c.engineLabel)).toEqual(['openai 1 in flight', 'openai 8 in flight']);
    const grid = sweep.replace('sweep: { target_qps: [0.5, 2] }', 'sweep: { target_qps: [1, 2], max_concurrency: [2, 4] }');
    expect(parseExperiment(grid, 'g.yaml').experiment.engines.slice(0, 4).map((e) => e.label)).toEqual(['ep 1 req/s, 2 in flight', 'ep 1 req/s, 4 in flight', 'ep 2 req/s, 2 in flight', 'ep 2 req/s, 4 in flight']);
  });

  it('refuses a sweep that cannot be one: not a server, nothing to vary, a value twice, a rate beside find_peak, a cap on batches', () => {
    const entry = (e: string): string => BASE.replace('engines: [{ name: onnxruntime }, { name: openvino }]', `engines: [${e}]`);
    expect(() => parseExperiment(entry('{ name: openai, sweep: { target_qps: [1] } }'), 'ss.yaml')).toThrowError(/ss\.yaml[\s\S]*engines\[0\]\.sweep: .*scenario is single_stream: set scenario: \{kind: server\}/);
    expect(() => parseExperiment(entry('{ name: openai, scenario: server, sweep: {} }'), 'e.yaml')).toThrowError(/engines\[0\]\.sweep: give target_qps/);
    expect(() => parseExperiment(entry('{ name: openai, scenario: { kind: server, find_peak: true }, sweep: { target_qps: [1, 2] } }'), 'p.yaml')).toThrowError(/sweep\.target_qps: find_peak searches the rate itself/);
    expect(() => parseExperiment(entry('{ name: openai, scenario: server, sweep: { target_qps: [] } }'), 'z.yaml')).toThrowError(/z\.yaml[\s\S]*engines\[0\]\.sweep\.target_qps/);
    expect(() => parseExperiment(entry('{ name: openai, scenario: { kind: server, find_peak: true }, sweep: { max_concurrency: [1, 2] } }').replace('batch_sizes: [1, 8]', 'batch_sizes: [1]\ngenerate: {}'), 'f.yaml')).toThrowError(/scenario\.target_qps: find_peak starts its search from a rate/);
    expect(() => parseExperiment(entry('{ name: openai, scenario: server, sweep: { target_qps: [1, 2, 1] } }'), 't.yaml')).toThrowError(/engines\[0\]\.sweep\.target_qps: list each rate once/);
    expect(() => parseExperiment(entry('{ name: onnxruntime, scenario: server, sweep: { max_concurrency: [1, 2] } }'), 'b.yaml')).toThrowError(/sweep\.max_concurrency: the cap on requests in flight belongs to the generate workload/);
    expect(parseExperiment(entry('{ name: onnxruntime, scenario: server, sweep: { target_qps: [100, 200] } }'), 'q.yaml').experiment.engines.map((e) => e.label)).toEqual(['onnxruntime 100 req/s', 'onnxruntime 200 req/s']);
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
