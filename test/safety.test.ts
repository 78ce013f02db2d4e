import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changedPaths, sha256File, snapshotTree } from './file-snapshot.js';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { PBH_BIN, suiteData, suiteModel } from './suite.js';

// ESC ] 8 ;; url BEL is an OSC 8 hyperlink, ESC [ 31 m turns text red, LF forges a new output line, U+202E
// reverses what follows: each would act on the terminal if printed raw.
const HOSTILE = 'evil\u001b]8;;http://x\u0007link\u001b[31mRED\nline2\u202e';
const HOSTILE_SHOWN = 'evil\\x1b]8;;http://x\\x07link\\x1b[31mRED\\nline2\\u202e';
const FORMULA = '=HYPERLINK("http://x","c")';
const RAW_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let dir: string;
let db: string;
let hostileRun: Awaited<ReturnType<typeof pbh>>;

const digits = { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 16 };
const base = { engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }], batch_sizes: [8], warmup_batches: 1, sessions: 1, scorers: ['top1'] };
const cnn = (name: string) => ({ name, path: suiteModel('digits_cnn'), weights: 'trained' });

/** Runs `action` and returns what changed under `root` meanwhile (nothing, for every refusal below). */
async function changesDuring(root: string, action: () => Promise<void>): Promise<string[]> {
  const before = snapshotTree(root);
  await action();
  return changedPaths(before, snapshotTree(root));
}

beforeAll(async () => {
  dir = await tempDir('pbh-safety-');
  db = path.join(dir, 'results', 'pbh.duckdb');
  const config = await writeConfig(dir, 'hostile.yaml', {
    name: 'hostile',
    dataset: digits,
    models: [cnn(HOSTILE), cnn(FORMULA), { name: `${HOSTILE} missing`, path: path.join(dir, 'missing.onnx'), weights: 'trained' }],
    ...base,
  });
  hostileRun = await pbh(['run', config, '--db', db]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('names from configs and databases reach the terminal escaped', () => {
  it('progress, the summary table and error notes show control characters as escapes', () => {
    expect(hostileRun.code, hostileRun.stderr).toBe(1);
    for (const text of [hostileRun.stdout, hostileRun.stderr]) {
      expect(text).not.toMatch(RAW_CONTROLS);
      expect(text).toContain(HOSTILE_SHOWN);
      // The LF in the name never starts a line of its own.
      expect(text.split('\n').some((line) => line.startsWith('line2'))).toBe(false);
    }
    // The failed cell's note: its error quotes the name, escaped like the name itself.
    expect(hostileRun.stdout).toContain('model "evil\\x1b]8;;http://x\\x07link\\x1b[31mRED');
  });

  it('pbh query tables escape them too; JSON keeps the exact name', async () => {
    const table = await pbh(['query', 'SELECT model_name, status FROM profiles ORDER BY model_name', '--db', db]);
    expect(table.code).toBe(0);
    expect(table.stdout).not.toMatch(RAW_CONTROLS);
    expect(table.stdout).toContain(HOSTILE_SHOWN);
    const rows = await queryJson<{ model_name: string }>(db, 'SELECT model_name FROM profiles ORDER BY model_name');
    expect(rows.map((r) => r.model_name)).toContain(HOSTILE);
  });

  it('pbh query CSV shows them escaped on a terminal, and keeps them exact in a pipe', async () => {
    const sql = 'SELECT model_name FROM profiles ORDER BY model_name';
    const piped = await pbh(['query', sql, '--db', db, '--format', 'csv']);
    expect(piped.stdout).toContain(HOSTILE.split('\n')[0]);
    // script(1) gives pbh a terminal for its stdout, as a person running it has.
    const command = [process.execPath, PBH_BIN, 'query', sql, '--db', db, '--format', 'csv'].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    const tty = execFileSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8' });
    expect(tty).toContain(HOSTILE_SHOWN.split('\\n')[0]);
    expect(tty.replace(/\r?\n/g, '')).not.toMatch(RAW_CONTROLS);
  });

  it('CSV output neutralises formulas with a leading quote and keeps numbers, negative ones included', async () => {
    const r = await pbh([
      'query',
      `SELECT model_name, -5 AS n, -1.5e3 AS x, '-5' AS s, '-2+3' AS f, '@SUM(A1)' AS a, '+1' AS p FROM profiles WHERE model_name = '${FORMULA.replace(/'/g, "''")}'`,
      '--db',
      db,
      '--format',
      'csv',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\r\n')[1]).toBe(`"'=HYPERLINK(""http://x"",""c"")",-5,-1500,-5,'-2+3,'@SUM(A1),+1`);
  });

  it('pbh export --format csv neutralises them too', async () => {
    const out = path.join(dir, 'exported-csv');
    const r = await pbh(['export', '--db', db, '--format', 'csv', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const profiles = readFileSync(path.join(out, 'profiles.csv'), 'utf8');
    expect(profiles).toContain(`'=HYPERLINK(""http://x"",""c"")`);
    expect(profiles).not.toMatch(/(^|,)"?=HYPERLINK/m);
  });
});

describe('pbh query reads the database and nothing else', () => {
  const refusals: [string, (d: string) => string, RegExp][] = [
    ['COPY over the database', (d) => `COPY (SELECT 'pwned') TO '${path.join(d, 'results', 'pbh.duckdb')}'`, /reading statements only/],
    ['COPY to a new file', (d) => `COPY (SELECT model_name FROM profiles) TO '${path.join(d, 'stolen.csv')}'`, /reading statements only/],
    ['EXPORT DATABASE', (d) => `EXPORT DATABASE '${path.join(d, 'exported')}'`, /reading statements only/],
    ['INSTALL httpfs', () => 'INSTALL httpfs', /reading statements only/],
    ['LOAD httpfs', () => 'LOAD httpfs', /reading statements only/],
    ['ATTACH another file', (d) => `ATTACH '${path.join(d, 'other.duckdb')}' AS other`, /reading statements only/],
    ['a COPY after a SELECT', (d) => `SELECT 1; COPY (SELECT 1) TO '${path.join(d, 'x.csv')}'`, /reading statements only/],
    ['SET enable_external_access', () => 'SET enable_external_access = true', /reading statements only/],
    ['PRAGMA enable_profiling', () => 'PRAGMA enable_profiling', /reading statements only/],
    ['read_csv of /etc/passwd', () => `SELECT * FROM read_csv('/etc/passwd')`, /reaches outside .*--allow-local-files/s],
    ['read_text of /etc/passwd', () => `SELECT * FROM read_text('/etc/passwd')`, /reaches outside/],
    ['a URL', () => `SELECT * FROM read_parquet('https://example.com/x.parquet')`, /reaches outside/],
    ['two SELECTs, whose first result would vanish', () => 'SELECT 1 AS a; SELECT 2 AS b', /holds 2 statements; pbh query prints one result/],
    ['an expression deeper than DuckDB allows, without advice pbh would refuse', () => `SELECT ${'abs('.repeat(1100)}1${')'.repeat(1100)}`, /cannot change settings \(SET is refused\): make the expression shallower/],
    ['PIVOT without IN, which the reading-only check cannot vet', () => 'PIVOT profiles ON engine_name USING count(*)', /PIVOT without IN \(\.\.\.\) cannot be checked .*IN \('onnxruntime', 'openvino'\)/],
  ];

  for (const [name, sql, message] of refusals) {
    it(`refuses ${name} (exit 2): the database and its folder are unchanged`, async () => {
      const sha = sha256File(db);
      let r: Awaited<ReturnType<typeof pbh>> | undefined;
      const changes = await changesDuring(dir, async () => {
        r = await pbh(['query', sql(dir), '--db', db]);
      });
      expect(r?.code, r?.stderr).toBe(2);
      expect(r?.stderr).toMatch(message);
      expect(r?.stderr).toContain(db);
      expect(sha256File(db)).toBe(sha);
      expect(changes).toEqual([]);
    });
  }

  it('runs SELECT and its forms: WITH, FROM, DESCRIBE, SHOW, SUMMARIZE, PIVOT with IN', async () => {
    for (const sql of ['WITH x AS (SELECT 1 AS one) SELECT * FROM x', 'FROM runs SELECT name', 'DESCRIBE profiles', 'SHOW TABLES', 'SUMMARIZE runs', "PIVOT profiles ON engine_name IN ('onnxruntime', 'openvino') USING count(*) GROUP BY model_name"]) {
      const r = await pbh(['query', sql, '--db', db]);
      expect(r.code, `${sql}: ${r.stderr}`).toBe(0);
    }
  });

  it('--allow-local-files reads local files and still writes nothing and installs nothing', async () => {
    const local = path.join(dir, 'local.csv');
    writeFileSync(local, 'a,b\n1,2\n3,4\n');
    const refused = await pbh(['query', `SELECT count(*)::INTEGER AS n FROM read_csv('${local}')`, '--db', db]);
    expect(refused.code).toBe(2);
    const allowed = await pbh(['query', `SELECT count(*)::INTEGER AS n FROM read_csv('${local}')`, '--db', db, '--allow-local-files', '--format', 'json']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.parse(allowed.stdout)).toEqual([{ n: 2 }]);
    const sha = sha256File(db);
    for (const sql of [`COPY (SELECT 1) TO '${path.join(dir, 'y.csv')}'`, 'INSTALL httpfs', `SELECT * FROM read_parquet('https://example.com/x.parquet')`]) {
      let r: Awaited<ReturnType<typeof pbh>> | undefined;
      const changes = await changesDuring(dir, async () => {
        r = await pbh(['query', sql, '--db', db, '--allow-local-files']);
      });
      expect(r?.code, sql).toBe(2);
      expect(r?.stderr, sql).toMatch(/Refused/);
      expect(changes, sql).toEqual([]);
    }
    expect(sha256File(db)).toBe(sha);
  });
});

describe('exit codes follow the README', () => {
  const unreadable: [string, (file: string) => void, RegExp][] = [
    ['random bytes', (f) => writeFileSync(f, Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251))), /not a DuckDB database file/],
    ['an empty file', (f) => writeFileSync(f, ''), /empty file/],
    ['a folder', (f) => mkdirSync(f), /is a folder/],
  ];
  for (const [name, make, reason] of unreadable) {
    it(`a database that is ${name} exits 3 from query and run, naming it, and stays as it was`, async () => {
      const root = path.join(dir, `unreadable-${name.replace(/\W+/g, '-')}`);
      mkdirSync(root);
      const file = path.join(root, 'pbh.duckdb');
      make(file);
      const config = await writeConfig(dir, 'one.yaml', { name: 'one', dataset: digits, models: [cnn('digits_cnn')], ...base });
      const changes = await changesDuring(root, async () => {
        for (const args of [['query', 'SELECT 1', '--db', file], ['run', config, '--db', file]]) {
          const r = await pbh(args);
          expect(r.code, `${args[0]}: ${r.stderr}`).toBe(3);
          expect(r.stderr).toContain(file);
          expect(r.stderr).toMatch(reason);
          expect(r.stderr).toMatch(/Point --db at/);
        }
      });
      expect(changes).toEqual([]);
    });
  }

  const plugins: [string, string, RegExp][] = [
    ['throws when imported', 'throw new Error("boom at import");\n', /plugin \.\/plugin\.mjs .*failed to load: Error: boom at import/],
    ['has a syntax error', 'export default {\n', /plugin \.\/plugin\.mjs .*failed to load: SyntaxError/],
    ['exports no plugin', 'export default { name: 1 };\n', /\.\/plugin\.mjs is not a PBH plugin/],
  ];
  for (const [name, source, message] of plugins) {
    it(`a plugin that ${name} exits 2 naming it`, async () => {
      const root = path.join(dir, `plugin-${name.replace(/\W+/g, '-')}`);
      mkdirSync(root);
      writeFileSync(path.join(root, 'plugin.mjs'), source);
      const config = await writeConfig(root, 'plugin.yaml', { name: 'p', dataset: digits, models: [cnn('digits_cnn')], ...base, plugins: ['./plugin.mjs'] });
      const r = await pbh(['run', config, '--db', path.join(root, 'pbh.duckdb')]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/plugins:/);
    });
  }

  it('a plugin path with no file exits 2 naming the path it looked at', async () => {
    const config = await writeConfig(dir, 'noplugin.yaml', { name: 'p', dataset: digits, models: [cnn('digits_cnn')], ...base, plugins: ['./nowhere/plugin.mjs'] });
    const r = await pbh(['run', config, '--db', path.join(dir, 'noplugin.duckdb')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no file ${path.join(dir, 'nowhere', 'plugin.mjs')}`);
  });

  it('a model path that is a folder is a failed Profile saying so (exit 1)', async () => {
    const folderDb = path.join(dir, 'folder-model.duckdb');
    const config = await writeConfig(dir, 'folder-model.yaml', {
      name: 'folder-model',
      dataset: digits,
      models: [{ name: 'folder', path: path.dirname(suiteModel('digits_cnn')), weights: 'trained' }],
      ...base,
    });
    const r = await pbh(['run', config, '--db', folderDb]);
    expect(r.code).toBe(1);
    const rows = await queryJson<{ error: string }>(folderDb, 'SELECT error FROM profiles');
    expect(rows[0]!.error).toMatch(/model "folder": .*models is a directory, not an ONNX file/);
    expect(rows[0]!.error).not.toMatch(/EISDIR/);
  });
});

describe('pbh site build writes only into a folder it owns', () => {
  let fakeSite: string;
  const fake = (args: string[], mode = 'ok') => pbh(args, { env: { PBH_SITE_DIR: fakeSite, FAKE_SITE: mode } });

  beforeAll(() => {
    // Empties its --out first, as Astro does: what pbh protects the user's folders from.
    fakeSite = path.join(dir, 'fake-site');
    mkdirSync(fakeSite);
    writeFileSync(path.join(fakeSite, 'package.json'), JSON.stringify({ name: '@pbh/site', private: true, scripts: { 'build:site': 'node build.mjs' } }));
    writeFileSync(
      path.join(fakeSite, 'build.mjs'),
      `import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
if (process.env.FAKE_SITE === 'fail') { process.stderr.write('fake build failed\\n'); process.exit(1); }
const out = process.env.PBH_SITE_OUT;
mkdirSync(out, { recursive: true });
for (const entry of readdirSync(out)) rmSync(path.join(out, entry), { recursive: true, force: true });
writeFileSync(path.join(out, 'index.html'), '<p>fake site</p>');
`,
    );
  });

  it('refuses a folder holding files it did not build, and touches none of them (exit 2)', async () => {
    const root = path.join(dir, 'user-folder');
    mkdirSync(path.join(root, 'precious', 'sub'), { recursive: true });
    writeFileSync(path.join(root, 'precious', 'precious.txt'), 'keep me');
    writeFileSync(path.join(root, 'precious', 'sub', 'keep.txt'), 'me too');
    const out = path.join(root, 'precious');
    let r: Awaited<ReturnType<typeof pbh>> | undefined;
    const changes = await changesDuring(root, async () => {
      r = await pbh(['site', 'build', '--db', db, '--out', out]);
    });
    expect(r?.code, r?.stderr).toBe(2);
    expect(r?.stderr).toContain(`--out ${out} is not empty and was not built by pbh site build`);
    expect(r?.stderr).toMatch(/\.pbh-site/);
    expect(r?.stderr).toMatch(/precious\.txt, sub/);
    expect(changes).toEqual([]);
  });

  it('refuses an --out that holds the database, also one it built and also through a link (exit 2)', async () => {
    const root = path.join(dir, 'db-inside');
    const site = path.join(root, 'site');
    mkdirSync(root);
    expect((await fake(['site', 'build', '--db', db, '--out', site])).code).toBe(0);
    const inside = path.join(site, 'pbh.duckdb');
    copyFileSync(db, inside);
    symlinkSync(site, path.join(root, 'link'));
    const sha = sha256File(inside);
    const changes = await changesDuring(root, async () => {
      for (const out of [site, path.join(root, 'link'), root]) {
        const r = await fake(['site', 'build', '--db', inside, '--out', out]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(`--out ${out} holds the database ${inside}`);
      }
    });
    expect(sha256File(inside)).toBe(sha);
    expect(changes).toEqual([]);
  });

  it('refuses an --out that is a file (exit 2)', async () => {
    const file = path.join(dir, 'a-file.html');
    writeFileSync(file, 'x');
    const r = await fake(['site', 'build', '--db', db, '--out', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--out ${file} is a file, not a folder`);
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  it('builds into a new or empty folder and replaces a site it built, leaving nothing beside it', async () => {
    const root = path.join(dir, 'sites');
    mkdirSync(path.join(root, 'empty'), { recursive: true });
    for (const name of ['new', 'empty']) {
      const r = await fake(['site', 'build', '--db', db, '--out', path.join(root, name)]);
      expect(r.code, r.stderr).toBe(0);
      expect(readdirSync(path.join(root, name)).sort()).toEqual(['.pbh-site', 'index.html']);
    }
    writeFileSync(path.join(root, 'new', 'stale.html'), 'from an older build');
    const again = await fake(['site', 'build', '--db', db, '--out', path.join(root, 'new')]);
    expect(again.code, again.stderr).toBe(0);
    expect(readdirSync(path.join(root, 'new')).sort()).toEqual(['.pbh-site', 'index.html']);
    expect(JSON.parse(readFileSync(path.join(root, 'new', '.pbh-site'), 'utf8'))).toMatchObject({ written_by: 'pbh site build' });
    // No staging or old folder is left beside the site.
    expect(readdirSync(root).sort()).toEqual(['empty', 'new']);
  });

  it('a failed build leaves the old site as it was', async () => {
    const root = path.join(dir, 'failing');
    mkdirSync(root);
    expect((await fake(['site', 'build', '--db', db, '--out', path.join(root, 'site')])).code).toBe(0);
    let r: Awaited<ReturnType<typeof pbh>> | undefined;
    const changes = await changesDuring(root, async () => {
      r = await fake(['site', 'build', '--db', db, '--out', path.join(root, 'site')], 'fail');
    });
    expect(r?.code).toBe(1);
    expect(r?.stderr).toMatch(/is as it was before the build/);
    expect(changes).toEqual([]);
  });

  it('the real build replaces a site pbh built, and its CSV downloads neutralise formulas', async () => {
    const out = path.join(dir, 'real-site');
    expect((await fake(['site', 'build', '--db', db, '--out', out])).code).toBe(0);
    const sha = sha256File(db);
    const r = await pbh(['site', 'build', '--db', db, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(sha256File(db)).toBe(sha);
    expect(existsSync(path.join(out, '.pbh-site'))).toBe(true);
    expect(readFileSync(path.join(out, 'index.html'), 'utf8')).not.toContain('fake site');
    const history = gunzipSync(readFileSync(path.join(out, 'data', 'history.csv.gz'))).toString('utf8');
    expect(history).toContain(`"'=HYPERLINK(""http://x"",""c"")"`);
    expect(history).not.toMatch(/(^|,)"?=HYPERLINK/m);
    expect(readdirSync(dir).filter((name) => name.includes('pbh-build') || name.includes('pbh-old'))).toEqual([]);
  }, 240_000);
});
