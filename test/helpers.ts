import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { PBH_BIN, ROOT } from './suite.js';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface PbhOptions {
  timeoutMs?: number;
  onStderr?: (text: string, child: ReturnType<typeof spawn>) => void;
  /** Working directory (default the repo root). */
  cwd?: string;
  /** Added to the environment. */
  env?: NodeJS.ProcessEnv;
}

/** Runs the built `pbh` binary exactly as a user would, from the repo root unless told otherwise. */
export function pbh(args: string[], opts: PbhOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PBH_BIN, ...args], { cwd: opts.cwd ?? ROOT, env: { ...process.env, FORCE_COLOR: '0', ...opts.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      opts.onStderr?.(stderr, child);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 240_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export async function tempDir(prefix = 'pbh-test-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

export async function writeConfig(dir: string, name: string, config: Record<string, unknown>): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, stringify(config));
  return file;
}

/** Writes a little-endian C-order .npy v1 file. */
export async function writeNpy(file: string, dtype: '<f4' | '<i8', shape: number[], values: ArrayLike<number>): Promise<void> {
  let header = `{'descr': '${dtype}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const total = 10 + header.length + 1;
  header = header.padEnd(header.length + ((64 - (total % 64)) % 64), ' ') + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const body = dtype === '<f4' ? Buffer.from(Float32Array.from(values).buffer) : Buffer.from(BigInt64Array.from(Array.from(values), (v) => BigInt(v)).buffer);
  await writeFile(file, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

export async function queryJson<T = Record<string, unknown>>(db: string, sql: string): Promise<T[]> {
  const r = await pbh(['query', sql, '--db', db, '--format', 'json']);
  if (r.code !== 0) throw new Error(`pbh query failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as T[];
}

/** A loopback port the OS says is free now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
