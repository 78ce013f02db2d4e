// The fault suite (npm run faults; npm test runs its quick part): kills at each phase of a small onnxruntime run,
// corrupt and foreign databases, hostile strings, bad configs and an interrupted site build. Every case checks
// the exit code, the Profiles the database holds afterwards, and that nothing outside the database (and the
// site's --out) changed; the table printed at the end is the suite's result.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changedPaths, snapshotTree } from './file-snapshot.js';
import { tempDir, writeConfig } from './helpers.js';
import { FULL, digits, exitOf, inSandbox, made, oneCell, printTable, record, rows, sandbox, storedProfiles, workload, type Sandbox } from './faults/sandbox.js';
import { ROOT, suiteModel } from './suite.js';

/** npm test runs the quick part (about 40 s on 2 cores): one phase per signal, three of the databases, four of the configs, SIGTERM during a site build. */
const QUICK_DATABASES = new Set(['random bytes', 'a folder', 'a foreign DuckDB database']);
const QUICK_CONFIGS = new Set(['YAML syntax error', 'a plugin that throws when imported', 'a model path that is a folder', 'the same cell twice', 'a dataset path that is a FIFO']);

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
    const runs = await inSandbox(s, ['query', 'SELECT ended, count(*)::INTEGER AS n FROM runs WHERE finished_at IS NOT NULL GROUP BY ended', '--db', s.db, '--format', 'json']);
    expect(JSON.parse(runs.stdout), 'the run is closed as interrupted').toEqual([{ ended: 'interrupted', n: 1 }]);
  }
  expect(row.changed).toEqual([]);
  if (signal === 'SIGKILL') {
    // The killed run's scratch is the next run's to remove, and it names the run it was.
    const next = await inSandbox(s, ['run', path.join(s.work, 'kill.yaml'), '--db', s.db, '--resume']);
    expect(next.stderr).toMatch(/pbh: run [0-9a-f-]{36} \(started [^)]+\) in .*pbh\.duckdb was killed before it finished: its scratch folder .* is removed; the Profiles it stored stay, and the run is closed as killed/);
    // The killed run closed at its last stored Profile (or its start), the next one finished: no run left open.
    const runs = await inSandbox(s, ['query', 'SELECT ended, count(*)::INTEGER AS n FROM runs GROUP BY ended ORDER BY ended', '--db', s.db, '--format', 'json']);
    expect(JSON.parse(runs.stdout)).toEqual([{ ended: 'finished', n: 1 }, { ended: 'killed', n: 1 }]);
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

const LONG = 'n'.repeat(5000);
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
  ['a CSV dataset path that is a device', 1, 1, (s) => writeConfig(s.work, 'c.yaml', { ...oneCell(), dataset: { kind: 'csv', path: '/dev/urandom', label_column: 'label' } })],
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

let goodDb: string;

beforeAll(async () => {
  await tracedRun();
  const s = await sandbox('good database', (p) => writeConfig(p.work, 'c.yaml', oneCell()));
  const r = await inSandbox(s, ['run', path.join(s.work, 'c.yaml'), '--db', s.db]);
  expect(r.code, r.stderr).toBe(0);
  goodDb = s.db;
}, 120_000);

afterAll(() => printTable('PBH fault suite: kills, databases, hostile strings, configs, site builds', true));

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
  it('names with ANSI, OSC, newlines and bidi controls reach no terminal raw; =HYPERLINK reaches no CSV raw; a 5,000-character name is cut in the summary', async () => {
    const s = await sandbox('hostile names', (p) =>
      writeConfig(p.work, 'c.yaml', {
        ...oneCell(),
        models: [
          { name: HOSTILE, path: suiteModel('digits_cnn'), weights: 'trained' },
          { name: '=HYPERLINK("http://x","c")', path: suiteModel('digits_cnn'), weights: 'trained' },
          { name: LONG, path: suiteModel('digits_cnn'), weights: 'trained' },
        ],
      }),
    );
    const run = await inSandbox(s, ['run', path.join(s.work, 'c.yaml'), '--db', s.db]);
    const table = await inSandbox(s, ['query', 'SELECT model_name, error FROM profiles', '--db', s.db]);
    const csv = await inSandbox(s, ['query', 'SELECT model_name FROM profiles ORDER BY model_name', '--db', s.db, '--format', 'csv']);
    const found = await storedProfiles(s);
    const row = record(s, 'hostile and 5,000-character model names (run, query table, CSV)', exitOf(run), 3, found.length);
    expect(run.code, run.stderr).toBe(0);
    for (const text of [run.stdout, run.stderr, table.stdout]) expect(text).not.toMatch(RAW_CONTROLS);
    // The summary cuts a long name; the Profile keeps it whole.
    expect(Math.max(...run.stdout.split('\n').map((l) => l.length)), run.stdout).toBeLessThan(400);
    expect(csv.stdout).toContain(LONG);
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
