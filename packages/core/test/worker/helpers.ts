import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DType, TypedArray } from '../../src/contracts/tensor.js';
import type { NamedTensor } from '../../src/worker/framing.js';
import { readManifest, type EngineDeclaration } from '../../src/worker/manifest.js';
import { createNativeEngine, type NativeEngine } from '../../src/worker/native-engine.js';

export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
export const ECHO_WORKER = `${FIXTURES}echo_worker.py`;
export const BROKEN_IMPORT_WORKER = `${FIXTURES}broken_import_worker.py`;
/** Declares the fixture engines: echo, echo-missing-runtime, broken-import, scripted-lm. */
export const FIXTURE_MANIFEST = `${FIXTURES}pbh-engine.json`;
export const REPO_PYTHON = fileURLToPath(new URL('../../../../.venv/bin/python', import.meta.url));

/** What a worker spawned directly needs to find its manifest entry (createNativeEngine sets the same). */
export function engineEnv(name = 'echo'): Record<string, string> {
  return { PBH_ENGINE_MANIFEST: FIXTURE_MANIFEST, PBH_ENGINE: name };
}

/** The fixture manifest's engine `name`, its declaration changed by `overrides` (a new name is what the worker looks up). */
export function fixtureEngine(name: string, overrides: Partial<EngineDeclaration> = {}): NativeEngine {
  const manifest = readManifest(FIXTURE_MANIFEST);
  const declaration = manifest.engines.find((e) => e.name === name);
  if (!declaration) throw new Error(`${FIXTURE_MANIFEST} declares no engine ${name}`);
  return createNativeEngine(manifest, { ...declaration, ...overrides });
}

/** True while a process with this pid exists (zombies count as gone: they no longer run). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

export async function waitUntilGone(pid: number, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!processAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return !processAlive(pid);
}

/** One small tensor per dtype with known values (float16 as raw bits of 1.0, 2.5, -3.0). */
export function tensorsOfEveryDtype(): NamedTensor[] {
  const make = (dtype: DType, data: TypedArray, dims = [data.length]): NamedTensor => ({ name: `t_${dtype}`, dtype, dims, data });
  return [
    make('float32', new Float32Array([1.5, -2, 3.25, 0]), [2, 2]),
    make('float64', new Float64Array([1e-300, -2.5, 1e300])),
    make('float16', new Uint16Array([0x3c00, 0x4100, 0xc200])),
    make('int8', new Int8Array([-128, -1, 0, 63])),
    make('uint8', new Uint8Array([0, 1, 127, 200])),
    make('int32', new Int32Array([-(2 ** 30), 7, 2 ** 30 - 1])),
    make('int64', new BigInt64Array([-(2n ** 61n), 5n, 2n ** 61n])),
    make('bool', new Uint8Array([1, 0, 1]), [3]),
  ];
}
