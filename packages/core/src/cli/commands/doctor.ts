import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { ENGINE_REQUIREMENTS, ensureVenv, withNeededExtras, type EngineExtra } from '../../worker/venv.js';
import { DEFAULT_DB, EXIT, UsageError, type Command } from '../command.js';
import { probeEngines } from './engines.js';

type Check = { name: string; ok: boolean; detail: string; fix?: string };

const NODE_MIN: [number, number] = [20, 19];
const PYTHON_MODULES = ['numpy', 'onnx', 'onnxruntime', 'sklearn', 'openvino', 'tvm', 'jax', 'scipy', 'onnxslim', 'pytest'];

function nodeCheck(): Check {
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  const ok = major > NODE_MIN[0] || (major === NODE_MIN[0] && minor >= NODE_MIN[1]);
  return { name: 'node', ok, detail: `Node.js ${process.versions.node} (need >= ${NODE_MIN.join('.')})`, fix: ok ? undefined : 'install Node.js 20.19 or newer' };
}

async function duckdbCheck(): Promise<Check> {
  try {
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    const reader = await conn.runAndReadAll('SELECT version() AS v');
    const v = String(reader.getRowObjects()[0]?.v);
    conn.closeSync();
    return { name: 'duckdb', ok: true, detail: `@duckdb/node-api with DuckDB ${v}` };
  } catch (e) {
    return { name: 'duckdb', ok: false, detail: (e as Error).message, fix: 'npm ci' };
  }
}

async function resultsCheck(): Promise<Check> {
  const dir = path.dirname(DEFAULT_DB);
  try {
    await mkdir(dir, { recursive: true });
    await access(dir);
    return { name: 'results', ok: true, detail: `${dir}/ is writable (default database ${DEFAULT_DB})` };
  } catch (e) {
    return { name: 'results', ok: false, detail: `${dir}/: ${(e as Error).message}`, fix: `create ${dir}/ or pass --db to pbh run` };
  }
}

/** `--engine NAME` (repeatable): an engine of ENGINE_REQUIREMENTS, or a usage error naming the ones there are. */
function engineExtras(value: string | boolean | string[] | undefined): EngineExtra[] {
  const names = value === undefined || typeof value === 'boolean' ? [] : [value].flat();
  const known = Object.keys(ENGINE_REQUIREMENTS);
  for (const name of names) {
    if (!known.includes(name)) throw new UsageError(`--engine ${name}: no engine installs its own Python packages by that name; the ones that do: ${known.join(', ')}`);
  }
  return names as EngineExtra[];
}

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'check Node, DuckDB, the Python venv and every engine; --fix creates the venv',
  usage: 'pbh doctor [--fix] [--engine pytorch] [--engine llm] [--engine tensorflow] [--engine litert]',
  help: `
Checks what PBH needs and prints, for every problem, the one command that fixes it.
The native runtimes (OpenVINO, TVM) live in a project-managed Python venv (.venv) created from python/requirements.txt.

Options:
  --fix           create .venv and install python/requirements.txt when something is missing
  --engine NAME   also check (with --fix: install) an engine's own Python packages, kept out of the default venv
                  for their size (repeatable): pytorch (python/requirements-pytorch.txt: torch with its CUDA libraries,
                  ~5.5 GB); llm (python/requirements-llm.txt: transformers, tokenizers, Optimum ONNX, optimum-intel,
                  OpenVINO GenAI, ONNX Runtime GenAI, ~220 MB; brings pytorch with it); tensorflow or litert (both
                  python/requirements-tensorflow.txt: tensorflow-cpu, keras, tf2onnx, ai-edge-litert, ~1.5 GB);
                  llama-cpp (python/requirements-llama-cpp.txt: llama-cpp-python and its server, built from source
                  with CMake, and llama.cpp's GGUF converter; brings llm with it)`,
  options: { fix: { type: 'boolean' }, engine: { type: 'string', multiple: true } },
  async run({ values }) {
    const extras = withNeededExtras(engineExtras(values.engine));
    const venv = await ensureVenv({ fix: values.fix === true, modules: PYTHON_MODULES, extras });
    const checks: Check[] = [
      nodeCheck(),
      await duckdbCheck(),
      await resultsCheck(),
      { name: 'python venv', ok: venv.ok, detail: venv.ok ? `${venv.python} has ${[...PYTHON_MODULES, ...extras.flatMap((e) => ENGINE_REQUIREMENTS[e].modules)].join(', ')}` : venv.missing.join('; '), fix: venv.ok ? undefined : venv.fix },
    ];
    const { engines, failures } = await probeEngines();
    for (const e of engines) {
      const a = e.availability;
      checks.push(a.available ? { name: `engine ${e.label}`, ok: true, detail: `${a.version} (${a.devices.join(', ')})` } : { name: `engine ${e.label}`, ok: false, detail: a.reason, fix: a.fix });
    }
    for (const f of failures) checks.push({ name: f.pkg, ok: false, detail: f.error, fix: 'npm ci && npm run build' });
    for (const c of checks) {
      process.stdout.write(`${c.ok ? 'ok  ' : 'FAIL'}  ${c.name.padEnd(20)} ${c.detail}\n`);
      if (c.fix) process.stdout.write(`      ${''.padEnd(20)} fix: ${c.fix}\n`);
    }
    return checks.every((c) => c.ok) ? EXIT.ok : EXIT.partial;
  },
};
