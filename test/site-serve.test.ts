import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { PBH_BIN, ROOT } from './suite.js';

let child: ChildProcess;
let origin: string;

/** A GET with the Host header we choose (fetch will not send a foreign one), and any other headers; the body as sent. */
function getRaw(pathname: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; bytes: Buffer }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path: pathname, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function get(pathname: string, host?: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const answer = await getRaw(pathname, host ? { Host: host } : {});
  return { ...answer, body: answer.bytes.toString() };
}

/** A page large enough to compress, and a binary file the console would read in ranges. */
const BIG_PAGE = `<!doctype html><title>big</title>${'<p>PBH results, a row of a table</p>'.repeat(2000)}`;
const BINARY = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251));

beforeAll(async () => {
  const dir = await tempDir('pbh-serve-');
  const site = path.join(dir, 'dist');
  mkdirSync(path.join(site, 'models'), { recursive: true });
  writeFileSync(path.join(site, 'index.html'), '<!doctype html><title>site</title>');
  writeFileSync(path.join(site, 'models', 'a.html'), '<!doctype html><title>a</title>');
  writeFileSync(path.join(site, 'big.html'), BIG_PAGE);
  writeFileSync(path.join(site, 'data.duckdb'), BINARY);
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

  it('compresses what compresses (brotli or gzip, as asked), keeps nosniff, and sends a range as the bytes on disk', async () => {
    const br = await getRaw('/big.html', { 'Accept-Encoding': 'br, gzip' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['x-content-type-options']).toBe('nosniff');
    expect(br.bytes.length).toBeLessThan(BIG_PAGE.length / 10);
    expect(brotliDecompressSync(br.bytes).toString()).toBe(BIG_PAGE);
    const gz = await getRaw('/big.html', { 'Accept-Encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.bytes).toString()).toBe(BIG_PAGE);
    const plain = await getRaw('/big.html');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.bytes.toString()).toBe(BIG_PAGE);
    const range = await getRaw('/data.duckdb', { 'Accept-Encoding': 'br, gzip', Range: 'bytes=100-199' });
    expect(range.status).toBe(206);
    expect(range.headers['content-encoding']).toBeUndefined();
    expect(range.headers['content-range']).toBe(`bytes 100-199/${BINARY.length}`);
    expect(range.bytes.equals(BINARY.subarray(100, 200))).toBe(true);
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
