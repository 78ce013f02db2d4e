import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { PBH_BIN, ROOT } from './suite.js';

let child: ChildProcess;
let origin: string;

/** A GET with the Host header we choose (fetch will not send a foreign one). */
function get(pathname: string, host?: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path: pathname, headers: host ? { Host: host } : {} }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  const dir = await tempDir('pbh-serve-');
  const site = path.join(dir, 'dist');
  mkdirSync(path.join(site, 'models'), { recursive: true });
  writeFileSync(path.join(site, 'index.html'), '<!doctype html><title>site</title>');
  writeFileSync(path.join(site, 'models', 'a.html'), '<!doctype html><title>a</title>');
  writeFileSync(path.join(dir, 'secret.txt'), 'not the site');
  symlinkSync(path.join(dir, 'secret.txt'), path.join(site, 'leak.txt'));
  symlinkSync(dir, path.join(site, 'up'));
  child = spawn(process.execPath, [PBH_BIN, 'site', 'serve', '--dir', site, '--port', '0'], { cwd: ROOT });
  origin = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at (http:\/\/[^ ]+?)\/ /.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`pbh site serve exited ${code}: ${out}`)));
  });
});

afterAll(() => {
  child?.kill('SIGTERM');
});

describe('pbh site serve', () => {
  it('serves the site with headers that stop sniffing and framing', async () => {
    const page = await get('/models/a.html');
    expect(page.status).toBe(200);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
  });

  it('never follows a link out of the site folder', async () => {
    expect((await get('/leak.txt')).status).toBe(404);
    expect((await get('/up/secret.txt')).status).toBe(404);
    expect((await get('/%2e%2e/secret.txt')).body).not.toContain('not the site');
  });

  it('answers loopback names only, so a rebound DNS name cannot read it', async () => {
    expect((await get('/index.html', 'localhost:4321')).status).toBe(200);
    const rebound = await get('/index.html', 'attacker.example:4321');
    expect(rebound.status).toBe(421);
  });
});
