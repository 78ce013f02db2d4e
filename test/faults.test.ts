// The fault suite (npm run faults; npm test runs its quick part): kills at each phase of a small onnxruntime run,
// corrupt and foreign databases, hostile strings, bad configs and an interrupted site build. Every case checks
// the exit code, the Profiles the database holds afterwards, and that nothing outside the database (and the
// site's --out) changed; the table printed at the end is the suite's result.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changedPaths, sha256File, snapshotTree, type TreeSnapshot } from './file-snapshot.js';
import { pbh, tempDir, writeConfig, type CliResult, type PbhOptions } from './helpers.js';
import { ROOT, suiteData, suiteModel } from './suite.js';

/**
 * PBH_FAULTS=full (npm run faults) runs every case; npm test runs the quick part (about 40 s on 2 cores): one phase
 * per signal, three of the databases, four of the configs, SIGTERM during a site build.
 */
const FULL = process.env.PBH_FAULTS === 'full';
const QUICK_DATABASES = new Set(['random bytes', 'a folder', 'a foreign DuckDB database']);
const QUICK_CONFIGS = new Set(['YAML syntax error', 'a plugin that throws when imported', 'a model path that is a folder', 'the same cell twice', 'a dataset path that is a FIFO']);

interface Row {
  name: string;
  exit: string;
  profilesExpected: number;
  profilesFound: number;
  /** Files added, removed or changed outside the database and --out: the suite fails unless this is empty. */
  changed: string[];
  /**
   * Entries left in the run's TMPDIR by pbh's own scratch folders (pbh-<run id>), which a SIGKILL leaves no chance to
   * remove: for a SIGKILL case, counted after the next run, which removes a dead run's scratch. onnxruntime's native
   * library also writes .ses and mat-debug-<pid>.log there on every run; those are its own.
   */
  tempLeft: number;
}
const rows: Row[] = [];
/** Every folder the suite made, removed once the table is printed. */
const made: string[] = [];

/** One case's folder: cwd `work/`, TMPDIR `tmp/`, the database `results/pbh.duckdb`, a site in `site/`. */
interface Sandbox {
  root: string;
  work: string;
  tmp: string;
  db: string;
  before: TreeSnapshot;
}

const OWN = ['results/pbh.duckdb', 'results/pbh.duckdb.wal', 'tmp', 'site'];

/** `prepare` writes what the case starts from (configs, bad databases); the snapshot is taken after it. */
async function sandbox(name: string, prepare?: (s: Omit<Sandbox, 'before'>) => unknown): Promise<Sandbox> {
  const root = await tempDir(`pbh-fault-${name.replace(/\W+/g, '-').slice(0, 40)}-`);
  made.push(root);
  const s = { root, work: path.join(root, 'work'), tmp: path.join(root, 'tmp'), db: path.join(root, 'results', 'pbh.duckdb') };
  for (const folder of [s.work, s.tmp, path.dirname(s.db)]) mkdirSync(folder, { recursive: true });
  await prepare?.(s);
  return { ...s, before: snapshotTree(root, OWN) };
}

function inSandbox(s: Sandbox, args: string[], opts: PbhOptions = {}): Promise<CliResult> {
  return pbh(args, { ...opts, cwd: s.work, env: { TMPDIR: s.tmp, ...opts.env } });
}

function exitOf(r: CliResult): string {
  return r.signal ? r.signal : String(r.code);
}

type Stored = { batch_size: number; status: string; error: string | null };

/** The Profiles a readable store holds (and that it is readable: pbh query exits 0); [] where the file is not a store. */
async function storedProfiles(s: Sandbox): Promise<Stored[]> {
  if (!existsSync(s.db)) return [];
  const r = await inSandbox(s, ['query', 'SELECT batch_size, status, error FROM profiles ORDER BY batch_size', '--db', s.db, '--format', 'json']);
  expect(r.code, `the database is readable after the fault: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as Stored[];
}

function record(s: Sandbox, name: string, exit: string, profilesExpected: number, profilesFound: number): Row {
  const scratch = [...snapshotTree(s.tmp).keys()].filter((entry) => entry.startsWith('pbh-')).length;
  const row = { name, exit, profilesExpected, profilesFound, changed: changedPaths(s.before, snapshotTree(s.root, OWN)), tempLeft: scratch };
  rows.push(row);
  return row;
}

const digits = { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 32 };
const workload = { warmup_batches: 1, sessions: 2, scorers: ['top1'] };

/**
 * Two cells (batch 8, then 16) on onnxruntime behind the pause plugin. Sessions are bounded by queries, not time
 * (min_duration_ms 0), so every run makes the same calls in the same order.
 */
function killConfig(s: { work: string }): Promise<string> {
  return writeConfig(s.work, 'kill.yaml', {
    name: 'faults',
    dataset: digits,
    models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
    engines: [{ name: 'onnxruntime_paused', options: { intraOpNumThreads: 1 } }],
    plugins: [path.join(ROOT, 'test', 'fixtures', 'pause-onnx-plugin.mjs')],
    batch_sizes: [8, 16],
    scenario: { kind: 'single_stream', min_duration_ms: 0, min_query_count: 2 },
    ...workload,
    // The kills pause at the nth runtime call the traced baseline counted: the session count must not follow the
    // machine's noise (the interval rule would add rounds), so it is fixed at the workload's.
    rounds: { max_sessions: workload.sessions },
  });
}

/** Where each phase of cell 2 begins, read off a traced run (the plugin numbers its calls) rather than assumed. */
interface Phases {
  plan: string;
  compile: string;
  verify: string;
  measure: string;
  score: string;
  'layer profile': string;
}
let phases: Phases;

/** The no-fault run that the kill cases are measured against; its trace says which call starts which phase. */
async function tracedRun(): Promise<void> {
  const s = await sandbox('no fault', killConfig);
  const r = await inSandbox(s, ['run', path.join(s.work, 'kill.yaml'), '--db', s.db], { env: { PBH_FAULT_TRACE: '1' } });
  const found = await storedProfiles(s);
  const row = record(s, 'no fault (baseline, traced)', exitOf(r), 2, found.length);
  expect(r.code, r.stderr).toBe(0);
  expect(found.map((p) => p.status)).toEqual(['ok', 'ok']);
  expect(row.changed).toEqual([]);
  // Cell 2's calls, in order, with the progress lines between them.
  const lines = r.stderr.split('\n');
  const cell2 = lines.slice(lines.findIndex((l) => l.startsWith('[2/2]')));
  const calls = (from: number, to = cell2.length): string[] =>
    cell2.slice(from, to).filter((l) => l.startsWith('PBH-FAULT-CALL predict:2:')).map((l) => l.slice('PBH-FAULT-CALL '.length));
  const session1 = cell2.findIndex((l) => l.trim() === 'session 1/2');
  const layers = cell2.findIndex((l) => l === 'PBH-FAULT-CALL layers:2');
  const beforeSessions = calls(0, session1);
  // The accuracy pass scores every sample once, in batches of the cell's size, after the last session.
  const scored = Math.ceil(digits.limit / 16);
  phases = {
    plan: 'probe',
    compile: 'prepare:2',
    verify: beforeSessions[0]!,
    measure: calls(session1)[0]!,
    score: calls(session1, layers).at(-scored)!,
    'layer profile': 'layers:2',
  };
  // verify's inference precedes the warmup session; the sessions come after both.
  expect(beforeSessions).toHaveLength(2);
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGKILL'] as const;
const EXIT_AFTER: Record<(typeof SIGNALS)[number], string> = { SIGINT: '130', SIGTERM: '143', SIGKILL: 'SIGKILL' };
const QUICK_PHASE: Record<(typeof SIGNALS)[number], keyof Phases> = { SIGINT: 'measure', SIGTERM: 'compile', SIGKILL: 'score' };

async function killAt(signal: (typeof SIGNALS)[number], phase: keyof Phases): Promise<void> {
  const s = await sandbox(`${signal} ${phase}`, killConfig);
  const point = phases[phase];
  let sent = false;
  const r = await inSandbox(s, ['run', path.join(s.work, 'kill.yaml'), '--db', s.db], {
    env: { PBH_FAULT_PAUSE: point },
    onStderr: (text, child) => {
      if (!sent && text.includes(`PBH-FAULT-PAUSED ${point}`)) {
        sent = true;
        child.kill(signal);
      }
    },
  });
  const found = await storedProfiles(s);
  // Cell 1 (batch 8) is stored before any cell-2 phase; SIGINT and SIGTERM also store the cell in flight as failed.
  const inCell2 = phase !== 'plan';
  const expected = [...(inCell2 ? [{ batch_size: 8, status: 'ok' }] : []), ...(signal === 'SIGKILL' ? [] : [{ batch_size: inCell2 ? 16 : 8, status: 'failed' }])];
  const row = record(s, `${signal} in ${phase} (${point})`, exitOf(r), expected.length, found.length);
  expect(sent, r.stderr).toBe(true);
  expect(row.exit, r.stderr).toBe(EXIT_AFTER[signal]);
  expect(found.map(({ batch_size, status }) => ({ batch_size, status }))).toEqual(expected);
  if (signal !== 'SIGKILL') {
    expect(found.at(-1)!.error).toMatch(signal === 'SIGINT' ? /interrupted by the user \(SIGINT\)/ : /interrupted by SIGTERM/);
    const runs = await inSandbox(s, ['query', 'SELECT count(*)::INTEGER AS n FROM runs WHERE finished_at IS NOT NULL', '--db', s.db, '--format', 'json']);
    expect(JSON.parse(runs.stdout), 'the run is closed').toEqual([{ n: 1 }]);
  }
  expect(row.changed).toEqual([]);
  if (signal === 'SIGKILL') {
    // The killed run's scratch is the next run's to remove, and it names the run it was.
    const next = await inSandbox(s, ['run', path.join(s.work, 'kill.yaml'), '--db', s.db, '--resume']);
    expect(next.stderr).toMatch(/pbh: run [0-9a-f-]{36} \(started [^)]+\) in .*pbh\.duckdb was killed before it finished: its scratch folder .* is removed/);
    const left = readdirSync(s.tmp).filter((name) => name.startsWith('pbh-'));
    expect(left, 'scratch left after the next run').toEqual([]);
    row.tempLeft = left.length;
  }
}

/** What the suite puts at a --db path, as files the user might point pbh at by mistake. */
const BAD_DATABASES: [string, (s: Omit<Sandbox, 'before'>, good: string) => void | Promise<void>][] = [
  ['random bytes', (s) => writeFileSync(s.db, Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919 + 13) % 256)))],
  ['an empty file', (s) => writeFileSync(s.db, '')],
  ['a folder', (s) => mkdirSync(s.db)],
  ['a text file', (s) => writeFileSync(s.db, 'model,engine\ndigits,onnxruntime\n')],
  ['an SQLite file', (s) => writeFileSync(s.db, Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4080)]))],
  ['a truncated PBH database', (s, good) => writeFileSync(s.db, readFileSync(good).subarray(0, 20_000))],
  [
    'a foreign DuckDB database',
    async (s) => {
      const instance = await DuckDBInstance.create(s.db);
      const connection = await instance.connect();
      await connection.run('CREATE TABLE invoices (id INTEGER, total DOUBLE); INSERT INTO invoices VALUES (1, 9.5)');
      connection.closeSync();
      instance.closeSync();
    },
  ],
  [
    'a PBH database from a newer pbh',
    async (s, good) => {
      copyFileSync(good, s.db);
      const instance = await DuckDBInstance.create(s.db);
      const connection = await instance.connect();
      await connection.run(`INSERT INTO schema_version VALUES (999, 'from the future', now())`);
      await connection.run('CHECKPOINT');
      connection.closeSync();
      instance.closeSync();
    },
  ],
];

const HOSTILE = 'evil\u001b]8;;http://x\u0007link\u001b[31mRED\nline2\u202e';
const RAW_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Configs a user gets wrong: the exit code and the Profiles each leaves (failed cells are Profiles, config errors none). */
const BAD_CONFIGS: [string, number, number, (s: Omit<Sandbox, 'before'>) => Promise<string>][] = [
  ['YAML syntax error', 2, 0, async (s) => writeText(path.join(s.work, 'c.yaml'), 'name: [unclosed\nmodels:\n')],
  ['unknown key', 2, 0, (s) => writeConfig(s.work, 'c.yaml', { ...oneCell(), batch_size: [8] })],
  ['batch_sizes of the wrong type', 2, 0, (s) => writeConfig(s.work, 'c.yaml', { ...oneCell(), batch_sizes: 'eight' })],
  ['a config file that does not exist', 2, 0, async (s) => path.join(s.work, 'nope.yaml')],
  ['the same cell twice', 2, 0, (s) => writeConfig(s.work, 'c.yaml', { ...oneCell(), batch_sizes: [8, 8] })],
  [
    'a plugin that throws when imported',
    2,
    0,
    async (s) => {
      writeText(path.join(s.work, 'p.mjs'), 'throw new Error("boom");\n');
      return writeConfig(s.work, 'c.yaml', { ...oneCell(), plugins: ['./p.mjs'] });
    },
  ],
  ['a plugin path with no file', 2, 0, (s) => writeConfig(s.work, 'c.yaml', { ...oneCell(), plugins: ['./missing.mjs'] })],
  ['an unknown engine', 1, 1, (s) => writeConfig(s.work, 'c.yaml', { ...oneCell(), engines: [{ name: 'onnxruntme' }] })],
  ['a model path that is a folder', 1, 1, (s) => writeConfig(s.work, 'c.yaml', { ...oneCell(), models: [{ name: 'folder', path: s.work, weights: 'trained' }] })],
  ['a model file that does not exist', 1, 1, (s) => writeConfig(s.work, 'c.yaml', { ...oneCell(), models: [{ name: 'ghost', path: path.join(s.work, 'ghost.onnx') }] })],
  ['a dataset file that does not exist', 1, 1, (s) => writeConfig(s.work, 'c.yaml', { ...oneCell(), dataset: { ...digits, inputs: { input: path.join(s.work, 'nope.npy') } } })],
  ['batch size 0', 1, 1, (s) => writeConfig(s.work, 'c.yaml', { ...oneCell(), batch_sizes: [0] })],
  ['a dataset path that is a device', 1, 1, (s) => writeConfig(s.work, 'c.yaml', { ...oneCell(), dataset: { ...digits, inputs: { input: '/dev/zero' } } })],
  [
    'a dataset path that is a FIFO',
    1,
    1,
    (s) => {
      const fifo = path.join(s.work, 'pipe.npy');
      execFileSync('mkfifo', [fifo]);
      return writeConfig(s.work, 'c.yaml', { ...oneCell(), dataset: { ...digits, inputs: { input: fifo } } });
    },
  ],
];

function writeText(file: string, text: string): string {
  writeFileSync(file, text);
  return file;
}

function oneCell(): Record<string, unknown> {
  return {
    name: 'one',
    dataset: digits,
    models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
    engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }],
    batch_sizes: [8],
    ...workload,
  };
}

let goodDb: string;

beforeAll(async () => {
  await tracedRun();
  const s = await sandbox('good database', (p) => writeConfig(p.work, 'c.yaml', oneCell()));
  const r = await inSandbox(s, ['run', path.join(s.work, 'c.yaml'), '--db', s.db]);
  expect(r.code, r.stderr).toBe(0);
  goodDb = s.db;
}, 120_000);

afterAll(() => {
  const header = ['case', 'exit', 'Profiles expected', 'Profiles found', 'files changed outside db/--out', 'pbh scratch left in TMPDIR'];
  const body = rows.map((r) => [r.name, r.exit, String(r.profilesExpected), String(r.profilesFound), String(r.changed.length), String(r.tempLeft)]);
  const sum = (pick: (r: Row) => number): string => String(rows.reduce((a, r) => a + pick(r), 0));
  const total = [`${rows.length} cases tried${FULL ? '' : ' (quick part; npm run faults runs all)'}`, '', sum((r) => r.profilesExpected), sum((r) => r.profilesFound), sum((r) => r.changed.length), sum((r) => r.tempLeft)];
  const widths = header.map((h, i) => Math.max(h.length, ...[...body, total].map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const changes = rows.flatMap((r) => r.changed.map((c) => `  ${r.name}: ${c}`));
  for (const root of made) rmSync(root, { recursive: true, force: true });
  console.log(['', 'PBH fault suite', line(header), rule, ...body.map(line), rule, line(total), ...(changes.length ? ['files changed outside the database and --out:', ...changes] : [])].join('\n'));
});

describe('kills at each phase of a small onnxruntime run', () => {
  for (const signal of SIGNALS) {
    for (const phase of ['plan', 'compile', 'verify', 'measure', 'score', 'layer profile'] as const) {
      if (!FULL && phase !== QUICK_PHASE[signal]) continue;
      it(`${signal} in ${phase}: Profiles stored so far are kept${signal === 'SIGKILL' ? '' : ', the cell in flight is stored as interrupted'}, the database opens`, () => killAt(signal, phase));
    }
  }
});

describe('corrupt and foreign databases', () => {
  for (const [name, make] of BAD_DATABASES) {
    if (!FULL && !QUICK_DATABASES.has(name)) continue;
    it(`${name}: pbh query and pbh run exit 3, naming the file, and leave it as it was`, async () => {
      const s = await sandbox(name, async (paths) => {
        await make(paths, goodDb);
        await writeConfig(paths.work, 'c.yaml', oneCell());
      });
      const database = snapshotTree(path.dirname(s.db));
      const query = await inSandbox(s, ['query', 'SELECT count(*) FROM profiles', '--db', s.db]);
      const run = await inSandbox(s, ['run', path.join(s.work, 'c.yaml'), '--db', s.db]);
      const row = record(s, `database: ${name}`, `${exitOf(query)}/${exitOf(run)}`, 0, 0);
      for (const r of [query, run]) {
        expect(r.code, r.stderr).toBe(3);
        expect(r.stderr).toContain(s.db);
      }
      expect(snapshotTree(path.dirname(s.db)), 'the database file is unchanged').toEqual(database);
      expect(row.changed).toEqual([]);
    });
  }
});

describe('hostile strings', () => {
  it('names with ANSI, OSC, newlines and bidi controls reach no terminal raw; =HYPERLINK reaches no CSV raw', async () => {
    const s = await sandbox('hostile names', (p) =>
      writeConfig(p.work, 'c.yaml', {
        ...oneCell(),
        models: [
          { name: HOSTILE, path: suiteModel('digits_cnn'), weights: 'trained' },
          { name: '=HYPERLINK("http://x","c")', path: suiteModel('digits_cnn'), weights: 'trained' },
        ],
      }),
    );
    const run = await inSandbox(s, ['run', path.join(s.work, 'c.yaml'), '--db', s.db]);
    const table = await inSandbox(s, ['query', 'SELECT model_name, error FROM profiles', '--db', s.db]);
    const csv = await inSandbox(s, ['query', 'SELECT model_name FROM profiles ORDER BY model_name', '--db', s.db, '--format', 'csv']);
    const found = await storedProfiles(s);
    const row = record(s, 'hostile model names (run, query table, CSV)', exitOf(run), 2, found.length);
    expect(run.code, run.stderr).toBe(0);
    for (const text of [run.stdout, run.stderr, table.stdout]) expect(text).not.toMatch(RAW_CONTROLS);
    expect(csv.stdout).toContain(`"'=HYPERLINK(""http://x"",""c"")"`);
    expect(row.changed).toEqual([]);
  });
});

describe('bad configs', () => {
  for (const [name, exit, profiles, make] of BAD_CONFIGS) {
    if (!FULL && !QUICK_CONFIGS.has(name)) continue;
    it(`${name}: exit ${exit}, ${profiles} Profile${profiles === 1 ? '' : 's'}`, async () => {
      let config = '';
      const s = await sandbox(name, async (p) => {
        config = await make(p);
      });
      const r = await inSandbox(s, ['run', config, '--db', s.db]);
      const found = await storedProfiles(s);
      const row = record(s, `config: ${name}`, exitOf(r), profiles, found.length);
      expect(r.code, r.stderr + r.stdout).toBe(exit);
      expect(found.filter((p) => p.status === 'failed')).toHaveLength(profiles);
      expect(row.changed).toEqual([]);
    });
  }
});

describe('an interrupted site build', () => {
  let fakeSite: string;
  beforeAll(async () => {
    // Stands in for Astro: empties its --out, writes a page, says where it is and holds still there until a signal.
    const root = await tempDir('pbh-fault-site-');
    made.push(root);
    fakeSite = path.join(root, 'site-project');
    mkdirSync(fakeSite);
    writeFileSync(path.join(fakeSite, 'package.json'), JSON.stringify({ name: '@pbh/site', private: true, scripts: { 'build:site': 'node build.mjs' } }));
    writeFileSync(
      path.join(fakeSite, 'build.mjs'),
      `import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
const out = process.env.PBH_SITE_OUT;
mkdirSync(out, { recursive: true });
for (const entry of readdirSync(out)) rmSync(path.join(out, entry), { recursive: true, force: true });
writeFileSync(path.join(out, 'index.html'), '<p>' + (process.env.FAKE_SITE_PAGE ?? 'new') + '</p>');
if (process.env.FAKE_SITE_HOLD) {
  process.stderr.write('FAKE-SITE-HOLDING ' + process.pid + '\\n');
  setInterval(() => undefined, 1000);
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(1));
}
`,
    );
  });

  for (const signal of SIGNALS) {
    if (!FULL && signal !== 'SIGTERM') continue;
    it(`${signal} during the build: the old site stays as it was${signal === 'SIGKILL' ? ' (the next build removes what the killed one left)' : ''}`, async () => {
      const s = await sandbox(`site ${signal}`);
      const out = path.join(s.root, 'site');
      const env = { PBH_SITE_DIR: fakeSite };
      expect((await inSandbox(s, ['site', 'build', '--db', goodDb, '--out', out], { env: { ...env, FAKE_SITE_PAGE: 'old' } })).code).toBe(0);
      const site = snapshotTree(out);
      // The marker's built_at changes with every build: the rebuild after a SIGKILL writes a new one.
      const ignored = ['tmp', 'site/.pbh-site'];
      const before = snapshotTree(s.root, ignored);
      let holder = 0;
      const r = await inSandbox(s, ['site', 'build', '--db', goodDb, '--out', out], {
        env: { ...env, FAKE_SITE_HOLD: '1' },
        onStderr: (text, child) => {
          const pid = /FAKE-SITE-HOLDING (\d+)/.exec(text)?.[1];
          if (pid === undefined || holder !== 0) return;
          holder = Number(pid);
          child.kill(signal);
          // A SIGKILLed pbh cannot stop its build; the build stands for what a crash leaves running, and is ended here.
          if (signal === 'SIGKILL') process.kill(holder, 'SIGKILL');
        },
      });
      expect(holder).toBeGreaterThan(0);
      expect(snapshotTree(out), 'the old site').toEqual(site);
      if (signal === 'SIGKILL') {
        expect((await inSandbox(s, ['site', 'build', '--db', goodDb, '--out', out], { env: { ...env, FAKE_SITE_PAGE: 'old' } })).code).toBe(0);
        expect(readFileSync(path.join(out, 'index.html'), 'utf8')).toBe('<p>old</p>');
      }
      const changed = changedPaths(before, snapshotTree(s.root, ignored));
      rows.push({ name: `site build, ${signal} during the build`, exit: exitOf(r), profilesExpected: 0, profilesFound: 0, changed, tempLeft: 0 });
      expect(exitOf(r)).toBe(EXIT_AFTER[signal]);
      expect(changed).toEqual([]);
    });
  }
});
