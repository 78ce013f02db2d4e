import { spawn } from 'node:child_process';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../store/index.js';
import { DEFAULT_DB, EXIT, UsageError, type Command } from '../command.js';

/**
 * The Astro project lives in the repository's site/ folder (package @pbh/site), not in core: core
 * only finds it and runs its `build:site` script. PBH_SITE_DIR points elsewhere when needed.
 */
function findSiteDir(): string {
  const candidates = [
    process.env.PBH_SITE_DIR,
    fileURLToPath(new URL('../../../../../site/', import.meta.url)),
    path.join(process.cwd(), 'site'),
  ].filter((c): c is string => typeof c === 'string' && c.length > 0);
  for (const dir of candidates) {
    const pkg = path.join(dir, 'package.json');
    if (!existsSync(pkg)) continue;
    const name = (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name;
    if (name === '@pbh/site') return path.resolve(dir);
  }
  throw new UsageError(
    `pbh site needs the PBH site project (package @pbh/site), looked in: ${candidates.join(', ')}. ` +
      `Run pbh from a PBH checkout, or set PBH_SITE_DIR to the folder holding site/package.json.`,
  );
}

/** Opens the file read-only once before the build: a locked, missing or foreign file fails here with its own clear message. */
async function profileCount(db: string): Promise<number> {
  const store = await openStore(db, { readOnly: true });
  try {
    return await store.withConnection(async (connection) => {
      const reader = await connection.runAndReadAll('SELECT count(*)::INTEGER FROM profiles');
      return Number(reader.getRows()[0]?.[0] ?? 0);
    });
  } finally {
    await store.close();
  }
}

function runSiteBuild(siteDir: string, db: string, out: string): Promise<{ code: number; locked: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'build:site'], {
      cwd: siteDir,
      env: { ...process.env, PBH_SITE_DB: db, PBH_SITE_OUT: out, ASTRO_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let locked = false;
    // Astro's progress goes to stderr: stdout stays for the result, so scripts can read where the site is.
    const forward = (chunk: Buffer): void => {
      const text = chunk.toString();
      if (/is locked|StoreLockedError/.test(text)) locked = true;
      process.stderr.write(text);
    };
    child.stdout.on('data', forward);
    child.stderr.on('data', forward);
    child.on('error', (error) =>
      reject(new Error(`Could not start "npm run build:site" in ${siteDir}: ${error.message}. Is npm on PATH?`, { cause: error })),
    );
    child.on('close', (code) => resolve({ code: code ?? 1, locked }));
  });
}

async function build(values: Record<string, unknown>): Promise<number> {
  const db = path.resolve(typeof values.db === 'string' ? values.db : DEFAULT_DB);
  const siteDir = findSiteDir();
  const out = path.resolve(typeof values.out === 'string' ? values.out : path.join(siteDir, 'dist'));
  const profiles = await profileCount(db);
  process.stderr.write(`Building the site from ${db} (${profiles} Profiles, opened read-only) into ${out} ...\n`);
  const started = Date.now();
  const result = await runSiteBuild(siteDir, db, out);
  if (result.code !== 0) {
    process.stderr.write(
      result.locked
        ? `pbh site build: ${db} became locked during the build (a pbh run started?). Wait for it to finish, or build from a copy: cp ${db} /tmp/pbh-copy.duckdb && pbh site build --db /tmp/pbh-copy.duckdb\n`
        : `pbh site build: the Astro build failed (exit ${result.code}); its output is above.\n`,
    );
    return result.locked ? EXIT.store : EXIT.partial;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    `Site built from ${db} (${profiles} Profiles) into ${out} in ${seconds} s.\n` +
      `Preview it:  npx pbh site serve --dir ${out}   then open http://localhost:4321/\n` +
      `Or open ${path.join(out, 'index.html')} directly (the SQL console needs a server).\n`,
  );
  return EXIT.ok;
}

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.wasm': 'application/wasm',
  '.parquet': 'application/vnd.apache.parquet',
  '.txt': 'text/plain; charset=utf-8',
};

/** The file a URL path names inside root, or null when it would leave root. */
function fileFor(root: string, relative: string): string | null {
  const file = path.resolve(root, `.${path.posix.sep}${relative}`);
  if (file !== root && !file.startsWith(`${root}${path.sep}`)) return null;
  if (existsSync(file) && statSync(file).isDirectory()) return path.join(file, 'index.html');
  if (!existsSync(file) && path.extname(file) === '' && existsSync(`${file}.html`)) return `${file}.html`;
  return file;
}

function sendFile(req: IncomingMessage, res: ServerResponse, file: string, status: number): void {
  const size = statSync(file).size;
  const headers: Record<string, string> = {
    'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream',
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'no-cache',
  };
  // duckdb-wasm reads Parquet with HTTP range requests: one range per request is all it asks for.
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  if (range && status === 200 && (range[1] || range[2])) {
    const start = range[1] ? Number(range[1]) : Math.max(0, size - Number(range[2]));
    const end = range[1] && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
    if (start >= size || start > end) {
      res.writeHead(416, { ...headers, 'Content-Range': `bytes */${size}` }).end();
      return;
    }
    res.writeHead(206, { ...headers, 'Content-Range': `bytes ${start}-${end}/${size}`, 'Content-Length': String(end - start + 1) });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file, { start, end }).pipe(res);
    return;
  }
  res.writeHead(status, { ...headers, 'Content-Length': String(size) });
  if (req.method === 'HEAD') res.end();
  else createReadStream(file).pipe(res);
}

function normaliseBase(base: string): string {
  const trimmed = base.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '/' : `/${trimmed}/`;
}

async function serve(values: Record<string, unknown>): Promise<number> {
  const root = path.resolve(typeof values.dir === 'string' ? values.dir : path.join(findSiteDir(), 'dist'));
  if (!existsSync(path.join(root, 'index.html'))) {
    throw new UsageError(`No built site in ${root} (no index.html). Build it first: npx pbh site build --out ${root}`);
  }
  const port = typeof values.port === 'string' ? Number(values.port) : 4321;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port ${String(values.port)} is not a port number (0-65535; 0 picks a free one)`);
  const host = typeof values.host === 'string' ? values.host : '127.0.0.1';
  const base = normaliseBase(typeof values.base === 'string' ? values.base : '/');
  const notFound = path.join(root, '404.html');
  // Request paths arrive percent-encoded: a base with a space is /my%20reports/ on the wire.
  const urlBase = encodeURI(base);

  const server = createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (base !== '/' && url.pathname === '/') {
      res.writeHead(302, { Location: urlBase }).end();
      return;
    }
    let relative: string;
    try {
      relative = decodeURIComponent(url.pathname.startsWith(urlBase) ? url.pathname.slice(urlBase.length) : '\u0000');
    } catch {
      relative = '\u0000';
    }
    const file = relative.includes('\u0000') ? null : fileFor(root, relative);
    if (file !== null && existsSync(file) && statSync(file).isFile()) sendFile(req, res, file, 200);
    else if (existsSync(notFound)) sendFile(req, res, notFound, 404);
    else res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new UsageError(`Port ${port} on ${host} is already in use: pass --port with another number (or 0 for any free port).`)
          : error,
      ),
    );
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  process.stdout.write(`Serving ${root} at http://${shownHost}:${address.port}${urlBase} (Ctrl-C to stop)\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      server.close(() => resolve());
      server.closeAllConnections();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return EXIT.ok;
}

export const siteCommand: Command = {
  name: 'site',
  summary: 'build the static results website from the database, or preview it on localhost',
  usage: 'pbh site build [--db PATH] [--out DIR]  |  pbh site serve [--dir DIR] [--port N] [--host ADDR] [--base /PATH/]',
  help: `
build   Builds the static site (Astro, in the repository's site/ folder) from the database, opened read-only:
        leaderboard, model, engine, comparison, history and per-Profile pages, CSV/JSON downloads, the database
        as Parquet and an in-browser SQL console. The database must not be held by a running pbh run: wait
        for it, or build from a copy of the file.
serve   Serves a built site on localhost (GET/HEAD, range requests for the SQL console's Parquet reads).

Options:
  --db PATH     database file (default ${DEFAULT_DB})
  --out DIR     where build writes the site (default site/dist)
  --dir DIR     the built site serve publishes (default site/dist)
  --port N      serve's port (default 4321; 0 = any free port)
  --host ADDR   serve's address (default 127.0.0.1)
  --base PATH   serve the site under this URL folder, e.g. /reports/pbh/ (default /)`,
  options: {
    db: { type: 'string' },
    out: { type: 'string' },
    dir: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    base: { type: 'string' },
  },
  async run({ values, positionals }) {
    const [action, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`pbh site ${action ?? ''} takes no further arguments (got ${extra.join(' ')})\nUsage: ${siteCommand.usage}`);
    if (action === 'build') return build(values);
    if (action === 'serve') return serve(values);
    throw new UsageError(`pbh site needs "build" or "serve"${action ? `, not "${action}"` : ''}.\nUsage: ${siteCommand.usage}`);
  },
};
