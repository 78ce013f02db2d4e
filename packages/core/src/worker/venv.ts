import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

/** What users are told to run when the Python side is missing. */
export const VENV_FIX_COMMAND = 'npx pbh doctor --fix';
export const VENV_MANUAL_FIX_COMMAND = 'python3 -m venv .venv && .venv/bin/pip install -r python/requirements.txt';
export const VENV_FIX = `${VENV_FIX_COMMAND} (or ${VENV_MANUAL_FIX_COMMAND})`;

const VENV_DIR = '.venv';
const REQUIREMENTS = join('python', 'requirements.txt');
const VENV_PYTHON = process.platform === 'win32' ? join('Scripts', 'python.exe') : join('bin', 'python');
const MODULE_DIR = dirname(fileURLToPath(import.meta.url));

export interface PythonLocation {
  python: string;
  /** Project root holding `.venv` and `python/requirements.txt`, when found by walking up. */
  root?: string;
  source: 'PBH_PYTHON' | 'PBH_VENV' | 'project';
}

function walkUpForProject(start: string): string | undefined {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    if (existsSync(join(dir, REQUIREMENTS))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The project root: the nearest folder above cwd (then above this module) with python/requirements.txt. */
export function findProjectRoot(cwd = process.cwd()): string | undefined {
  return walkUpForProject(cwd) ?? walkUpForProject(MODULE_DIR);
}

/**
 * The Python that runs native workers: $PBH_PYTHON, else $PBH_VENV/bin/python, else `.venv/bin/python` of
 * the project root. Undefined when none exists on disk.
 */
export function findVenvPython(cwd = process.cwd()): PythonLocation | undefined {
  const explicit = process.env.PBH_PYTHON;
  if (explicit) return existsSync(explicit) ? { python: explicit, source: 'PBH_PYTHON' } : undefined;
  const venv = process.env.PBH_VENV;
  if (venv) {
    const python = join(venv, VENV_PYTHON);
    return existsSync(python) ? { python, source: 'PBH_VENV' } : undefined;
  }
  for (const start of [cwd, MODULE_DIR]) {
    for (let dir = resolve(start); ; dir = dirname(dir)) {
      const python = join(dir, VENV_DIR, VENV_PYTHON);
      if (existsSync(join(dir, REQUIREMENTS)) && existsSync(python)) return { python, root: dir, source: 'project' };
      if (dirname(dir) === dir) break;
    }
  }
  return undefined;
}

export interface VenvStatus {
  ok: boolean;
  python?: string;
  root?: string;
  /** Human-readable problems, each naming what is missing. */
  missing: string[];
  fix: string;
}

/** Where the venv python is looked for, for messages that say it was not found. */
export function describePythonSearch(cwd = process.cwd()): string {
  if (process.env.PBH_PYTHON) return `PBH_PYTHON=${process.env.PBH_PYTHON} does not exist`;
  if (process.env.PBH_VENV) return `PBH_VENV=${process.env.PBH_VENV} has no ${VENV_PYTHON}`;
  return `no ${VENV_DIR}/${VENV_PYTHON} next to a ${REQUIREMENTS} above ${cwd} or above ${MODULE_DIR} (PBH_PYTHON and PBH_VENV are unset)`;
}

/** Checks the venv python exists and can import `modules`. */
export async function venvStatus(modules: readonly string[] = [], cwd = process.cwd()): Promise<VenvStatus> {
  const location = findVenvPython(cwd);
  if (!location) return { ok: false, missing: [describePythonSearch(cwd)], fix: VENV_FIX };
  const missing = await missingModules(location.python, modules);
  return { ok: missing.length === 0, python: location.python, root: location.root, missing, fix: VENV_FIX };
}

const FIND_MODULES = 'import importlib.util, sys\nfor m in sys.argv[1:]:\n    if importlib.util.find_spec(m) is None: print(m)';

async function missingModules(python: string, modules: readonly string[]): Promise<string[]> {
  if (modules.length === 0) return [];
  const result = await execa(python, ['-c', FIND_MODULES, ...modules], { reject: false, timeout: 60_000 });
  if (result.failed) return [`${python} cannot check modules: ${result.shortMessage}`];
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((m) => `python module ${m} is not installed in ${python}`);
}

/**
 * Engines whose Python runtime is too heavy for the default venv: installed on request (`pbh doctor --fix --engine
 * NAME`) from their own pinned file, with python/requirements.txt and the files of the extras it `needs` as
 * constraints so nothing they pin moves. An extra's `needs` are installed before it.
 */
export const ENGINE_REQUIREMENTS = {
  // torch from PyPI brings its CUDA libraries (about 5.5 GB installed), even on a CPU-only machine.
  pytorch: { file: join('python', 'requirements-pytorch.txt'), modules: ['torch', 'onnx2torch', 'onnxscript'], needs: [] },
  // transformers, tokenizers, Optimum ONNX / optimum-intel exporters, OpenVINO GenAI, ONNX Runtime GenAI: all run on torch.
  llm: {
    file: join('python', 'requirements-llm.txt'),
    modules: ['transformers', 'tokenizers', 'optimum.onnx', 'optimum.intel', 'openvino_genai', 'onnxruntime_genai', 'aiohttp', 'httpx', 'fastapi', 'uvicorn'],
    needs: ['pytorch'],
  },
  // tensorflow-cpu, keras, tf2onnx and ai-edge-litert (about 1.5 GB): both engines, and the conversion of their models.
  tensorflow: { file: join('python', 'requirements-tensorflow.txt'), modules: ['tensorflow', 'keras', 'tf2onnx', 'ai_edge_litert'], needs: [] },
  litert: { file: join('python', 'requirements-tensorflow.txt'), modules: ['tensorflow', 'tf2onnx', 'ai_edge_litert'], needs: [] },
  // llama-cpp-python is a source build (CMake; minutes on 2 cores): for any x86-64 CPU with AVX2, not this one's
  // -march=native, and without the multimodal library. Then llama.cpp's GGUF converter is kept from the same sdist.
  'llama-cpp': {
    file: join('python', 'requirements-llama-cpp.txt'),
    modules: ['llama_cpp', 'llama_cpp.server', 'llama_cpp_converter', 'sentencepiece'],
    needs: ['llm'],
    env: { CMAKE_ARGS: '-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF' },
    after: join('python', 'llama_cpp_converter_install.py'),
  },
} as const satisfies Record<string, { file: string; modules: readonly string[]; needs: readonly string[]; env?: Record<string, string>; after?: string }>;
export type EngineExtra = keyof typeof ENGINE_REQUIREMENTS;

/** `extras` with what each needs, needs first, each once. */
export function withNeededExtras(extras: readonly EngineExtra[]): EngineExtra[] {
  const out: EngineExtra[] = [];
  const add = (extra: EngineExtra): void => {
    if (out.includes(extra)) return;
    for (const need of ENGINE_REQUIREMENTS[extra].needs) add(need);
    out.push(extra);
  };
  for (const extra of extras) add(extra);
  return out;
}

export interface EnsureVenvOptions {
  /** Create the venv and install requirements when something is missing; otherwise only report. */
  fix: boolean;
  /** Project root (defaults to the one found from cwd). */
  root?: string;
  modules?: readonly string[];
  /** Where pip/venv output goes while fixing (defaults to this process's stderr). */
  log?: (line: string) => void;
  /** Engines of ENGINE_REQUIREMENTS to install too: their modules are checked, their file installed after the base one. */
  extras?: readonly EngineExtra[];
}

/** venvStatus, and with `fix` the venv created at ROOT/.venv plus `pip install -r python/requirements.txt`. */
export async function ensureVenv(options: EnsureVenvOptions): Promise<VenvStatus> {
  const extras = withNeededExtras(options.extras ?? []);
  // Two extras may need one module (tensorflow and litert share their file): each is checked once.
  const modules = [...new Set([...(options.modules ?? []), ...extras.flatMap((e) => ENGINE_REQUIREMENTS[e].modules)])];
  const before = await venvStatus(modules);
  if (before.ok || !options.fix) return before;
  const root = options.root ?? before.root ?? findProjectRoot();
  if (!root) {
    return { ...before, missing: [...before.missing, `no ${REQUIREMENTS} above ${process.cwd()}: run from the project folder`] };
  }
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const python = join(root, VENV_DIR, VENV_PYTHON);
  const steps: [string, string[], Record<string, string>?][] = [];
  if (!existsSync(python)) steps.push(['python3', ['-m', 'venv', join(root, VENV_DIR)]]);
  steps.push([python, ['-m', 'pip', 'install', '-r', join(root, REQUIREMENTS)]]);
  for (const extra of extras) {
    const spec: { file: string; needs: readonly EngineExtra[]; env?: Record<string, string>; after?: string } = ENGINE_REQUIREMENTS[extra];
    const constraints = [REQUIREMENTS, ...spec.needs.map((need) => ENGINE_REQUIREMENTS[need].file)];
    steps.push([python, ['-m', 'pip', 'install', '-r', join(root, spec.file), ...constraints.flatMap((c) => ['-c', join(root, c)])], spec.env]);
    if (spec.after) steps.push([python, [join(root, spec.after)]]);
  }
  for (const [file, args, env] of steps) {
    log(`$ ${env ? Object.entries(env).map(([k, v]) => `${k}='${v}' `).join('') : ''}${file} ${args.join(' ')}`);
    const result = await execa(file, args, { cwd: root, reject: false, all: true, env });
    if (result.all) log(result.all);
    if (result.failed) {
      return { ok: false, python, root, missing: [`\`${file} ${args.join(' ')}\` failed: ${result.shortMessage}`], fix: VENV_MANUAL_FIX_COMMAND };
    }
  }
  return venvStatus(modules, root);
}
