import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { STATUS_CODES, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import compression from 'compression';
import serveStatic from 'serve-static';
import { z } from 'zod';
import { SITE_BUILD_LOCKED_EXIT } from '../../publish/index.js';
import { openStore } from '../../store/index.js';
import { DEFAULT_DB, EXIT, UsageError, type Command } from '../command.js';
import { lockSiteBuild } from '../site-build-lock.js';
import { SITE_MARKER, checkSiteFolder, publishStaging, removeStaging, stagingFolder } from '../site-folder.js';

const SitePackageSchema = z.object({ name: z.literal('@pbh/site') });

/** send's errors (http-errors) carry the status to answer: 416 for a range past the end, 412 for a failed precondition. */
const HttpErrorSchema = z.object({ statusCode: z.number().int().min(400).max(599) });

/** PBH_SITE_DIR names the site project's folder; it must be that project, not just any folder with a package.json. */
function siteDirFromEnv(dir: string): string {
  const pkg = path.join(dir, 'package.json');
  const found = existsSync(pkg) ? SitePackageSchema.safeParse(JSON.parse(readFileSync(pkg, 'utf8'))).success : false;
  if (!found) {
    throw new UsageError(`PBH_SITE_DIR is ${dir}, which does not hold the PBH site project (no package.json named @pbh/site there). Point it at the site's folder, or unset it.`);
  }
  return path.resolve(dir);
}

/**
 * The Astro project is its own package, @pbh/site, which depends on core (core never depends on it):
 * Node finds it the way it finds any package, through the workspace's node_modules/@pbh/site link.
 * Core only finds it and runs its `build:site` script. PBH_SITE_DIR overrides the lookup.
 */
function findSiteDir(): string {
  const override = process.env.PBH_SITE_DIR;
  if (override) return siteDirFromEnv(override);
  try {
    return path.dirname(createRequire(import.meta.url).resolve('@pbh/site/package.json'));
  } catch (error) {
    throw new UsageError(
      `pbh site needs the PBH site project (package @pbh/site), and Node cannot find it from ${fileURLToPath(new URL('.', import.meta.url))} ` +
        `(${error instanceof Error ? error.message.split('\n')[0] : String(error)}). Run pbh from a PBH checkout after npm install at its root ` +
        `(npm links node_modules/@pbh/site there), or set PBH_SITE_DIR to the folder holding the site's package.json.`,
      { cause: error },
    );
  }
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

/**
 * The build's Node options: the user's, with 64 MB semi-spaces for the young generation. The build holds every Profile
 * (a heap of a gigabyte or more at 10,000 Profiles) while rendering pages that allocate short-lived strings, and
 * V8's default 16 MB scavenged so often that young objects were promoted and marked with the whole heap.
 */
function buildNodeOptions(): string {
  const own = process.env.NODE_OPTIONS ?? '';
  return own.includes('--max-semi-space-size') ? own : `${own} --max-semi-space-size=64`.trim();
}

/** Exit status of the build, or the signal that stopped pbh meanwhile and, with it, the build. */
function runSiteBuild(siteDir: string, db: string, out: string): Promise<{ code: number; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    let stoppedBy: NodeJS.Signals | null = null;
    // npm does not pass a signal on to the script it runs: the whole group is signalled, or the build would go on
    // writing after pbh has removed its staging folder and exited.
    const onSignal = (signal: NodeJS.Signals): void => {
      stoppedBy = signal;
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, signal);
        } catch {
          // The group is already gone.
        }
      }
    };
    // Astro's progress goes to stderr: stdout stays for the result, so scripts can read where the site is.
    const child = spawn('npm', ['run', '--silent', 'build:site'], {
      cwd: siteDir,
      env: { ...process.env, PBH_SITE_DB: db, PBH_SITE_OUT: out, ASTRO_TELEMETRY_DISABLED: '1', NODE_OPTIONS: buildNodeOptions() },
      stdio: ['ignore', process.stderr, process.stderr],
      // Its own process group, so onSignal reaches npm, the shell and the build together.
      detached: true,
    });
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const done = (): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
    child.on('error', (error) => {
      done();
      reject(new Error(`Could not start "npm run build:site" in ${siteDir}: ${error.message}. Is npm on PATH?`, { cause: error }));
    });
    child.on('close', (code) => {
      done();
      resolve({ code: code ?? 1, signal: stoppedBy });
    });
  });
}

async function build(values: Record<string, unknown>): Promise<number> {
  const db = path.resolve(typeof values.db === 'string' ? values.db : DEFAULT_DB);
  const siteDir = findSiteDir();
  const defaultOut = path.join(siteDir, 'dist');
  const out = path.resolve(typeof values.out === 'string' ? values.out : defaultOut);
  const folder = checkSiteFolder(out, db, defaultOut);
  const profiles = await profileCount(db);
  const release = await lockSiteBuild(siteDir, (line) => process.stderr.write(`${line}\n`));
  process.stderr.write(`Building the site from ${db} (${profiles} Profiles, opened read-only) into ${out} ...\n`);
  const started = Date.now();
  // Astro empties the folder it builds into: it builds into a fresh folder beside the site, which then replaces it.
  const staging = stagingFolder(folder);
  let result: Awaited<ReturnType<typeof runSiteBuild>>;
  try {
    result = await runSiteBuild(siteDir, db, staging);
    if (result.code === 0 && result.signal === null) publishStaging(staging, folder);
  } finally {
    removeStaging(staging);
    await release();
  }
  const { code, signal } = result;
  if (signal !== null) {
    process.stderr.write(`pbh site build: stopped by ${signal}; ${out} is as it was before the build.\n`);
    return signal === 'SIGTERM' ? EXIT.terminated : EXIT.interrupted;
  }
  if (code === SITE_BUILD_LOCKED_EXIT) {
    process.stderr.write(
      `pbh site build: ${db} became locked during the build (a pbh run started?). Wait for it to finish, or build from a copy: cp ${db} /tmp/pbh-copy.duckdb && pbh site build --db /tmp/pbh-copy.duckdb\n`,
    );
    return EXIT.store;
  }
  if (code !== 0) {
    process.stderr.write(`pbh site build: the Astro build failed (exit ${code}); its output is above. ${out} is as it was before the build.\n`);
    return EXIT.partial;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    `Site built from ${db} (${profiles} Profiles) into ${out} in ${seconds} s.\n` +
      `Preview it:  npx pbh site serve --dir ${out}   then open http://localhost:4321/\n` +
      `Or open ${path.join(out, 'index.html')} directly (the SQL console needs a server).\n`,
  );
  return EXIT.ok;
}

function normaliseBase(base: string): string {
  const trimmed = base.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '/' : `/${trimmed}/`;
}

/** The site's own 404.html with status 404, or a plain line where the site has none. */
function notFoundResponder(root: string): (req: IncomingMessage, res: ServerResponse) => void {
  const page = path.join(root, '404.html');
  const [type, body] = existsSync(page) ? ['text/html', readFileSync(page)] : ['text/plain', Buffer.from('not found\n')];
  return (req, res) => {
    res.writeHead(404, { 'Content-Type': `${type}; charset=utf-8`, 'Content-Length': String(body.length) });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

/** Headers on every answer: no type sniffing, no framing, no plugins, no referrer leaving the site. */
const SAFE_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "frame-ancestors 'none'; object-src 'none'; base-uri 'self'",
  'Referrer-Policy': 'no-referrer',
};

type Handler = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/**
 * Brotli or gzip, as the browser accepts, for compressible types (HTML, JS, CSS, SVG, JSON, the console's wasm: 34 MB
 * that brotli sends as about 8). A range answer is sent as it is: its Content-Range counts the file's own bytes.
 */
// compression's types name Express's request and response; it reads and writes only what node:http's have.
const compress = compression({ filter: (req, res) => req.headers.range === undefined && compression.filter(req, res) }) as unknown as Handler;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Whether `relative` (a decoded path under the site) stays inside the site once links are followed: a link in the
 * folder to /etc/passwd is not the site's to serve. A path that does not exist is left to the 404 answer.
 */
function insideSite(rootReal: string, relative: string): boolean {
  for (const candidate of [relative, `${relative}.html`, path.join(relative, 'index.html')]) {
    const file = path.join(rootReal, candidate);
    if (!existsSync(file)) continue;
    const real = realpathSync(file);
    if (real !== rootReal && !real.startsWith(`${rootReal}${path.sep}`)) return false;
  }
  return true;
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
  // Request paths arrive percent-encoded: a base with a space is /my%20reports/ on the wire.
  const urlBase = encodeURI(base);
  const notFound = notFoundResponder(root);
  // serve-static (send) answers ranges (the SQL console reads data/pbh.duckdb in ranges), HEAD and conditional GETs.
  const files = serveStatic(root, {
    extensions: ['html'],
    // Its directory redirect would be built from the URL with the base cut off; the site links files, never folders.
    redirect: false,
    setHeaders: (res, file) => {
      // mime-db knows the Parquet type but maps no extension to it.
      if (file.endsWith('.parquet')) res.setHeader('Content-Type', 'application/vnd.apache.parquet');
    },
  });

  const rootReal = realpathSync(root);
  // Bound to loopback, only loopback names may ask: a page elsewhere cannot rebind its DNS name onto this server.
  const loopbackOnly = LOOPBACK.has(host);
  const server = createServer((req, res) => {
    for (const [name, value] of Object.entries(SAFE_HEADERS)) res.setHeader(name, value);
    const asked = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    if (loopbackOnly && !LOOPBACK.has(asked)) {
      res.writeHead(421, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`this server answers localhost only, not ${asked || 'a request without Host'}\n`);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (base !== '/' && url.pathname === '/') {
      res.writeHead(302, { Location: urlBase }).end();
      return;
    }
    if (!url.pathname.startsWith(urlBase)) {
      notFound(req, res);
      return;
    }
    req.url = `/${url.pathname.slice(urlBase.length)}${url.search}`;
    let relative: string;
    try {
      relative = decodeURIComponent(url.pathname.slice(urlBase.length));
    } catch {
      notFound(req, res);
      return;
    }
    if (!insideSite(rootReal, path.normalize(`/${relative}`).slice(1))) {
      notFound(req, res);
      return;
    }
    compress(req, res, () =>
      files(req, res, (error?: unknown) => {
        if (error === undefined) {
          notFound(req, res);
          return;
        }
        const status = HttpErrorSchema.safeParse(error).data?.statusCode ?? 500;
        res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${STATUS_CODES[status] ?? 'error'}\n`);
      }),
    );
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
build   Builds the static site (Astro, the @pbh/site package) from the database, opened read-only:
        leaderboard, model, engine, comparison, history and per-Profile pages, CSV/JSON downloads, the database
        as Parquet and an in-browser SQL console. The database must not be held by a running pbh run: wait
        for it, or build from a copy of the file.
        Builds of one site project run one at a time: a second waits for the first, saying so.
        The site is built in a new folder beside --out, which then replaces --out (a failed build leaves the
        old site as it was). --out must be a new or empty folder, or one pbh site build made (it leaves a
        ${SITE_MARKER} file there), and must not contain the database.
serve   Serves a built site on localhost (GET/HEAD, brotli or gzip where the browser takes it, range requests
        for the SQL console's reads of data/pbh.duckdb).

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
