import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

/** What the site's browser tests share: where the repository and the pbh CLI are, Chromium's flags, pbh as a child. */
export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const PBH = path.join(ROOT, 'packages', 'core', 'dist', 'cli', 'main.js');
export const CHROMIUM = '/usr/bin/chromium';

export const BROWSER_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** pbh as a child of this process, with colour off and `env` over the test's own environment. */
export function pbh(args: string[], timeoutMs = 240_000, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return collect(process.execPath, [PBH, ...args], ROOT, { ...env, FORCE_COLOR: '0' }, timeoutMs);
}

/** Any command's exit code and output, SIGKILLed past `timeoutMs`. */
export function collect(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A gzip-compressed download of the built site, as text. */
export function readGz(file: string): string {
  return gunzipSync(readFileSync(file)).toString('utf8');
}

/** A gzip-compressed JSON download of the built site, parsed. */
export function readJsonGz(file: string): unknown {
  return JSON.parse(readGz(file));
}
