import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { join } from 'node:path';
import { pbh } from '../../../../test/helpers.js';
import { openStore } from '../../src/store/index.js';
import { runStart, SYSTEM, tempDir } from '../store/profile-fixture.js';
import { profileWith, runOf as run, shaOf as sha, writeSteppedHistory } from './history-fixture.js';

const CompareJson = z.array(
  z.object({ cell_key: z.string(), verdict: z.string(), ratio: z.number().nullable(), ci95_low: z.number().nullable(), ci95_high: z.number().nullable(), why: z.string(), caveats: z.array(z.string()), regression: z.boolean() }),
);
const HistoryJson = z.array(z.object({ kind: z.string(), what: z.string(), run_id: z.string(), git_sha: z.string().nullable(), previous_git_sha: z.string().nullable(), ratio: z.number().nullable() }));

describe('pbh history and pbh compare on real DuckDB files', () => {
  const { dir, cleanup } = tempDir();
  const db = join(dir, 'history.duckdb');
  const other = join(dir, 'other.duckdb');
  let levels: number[][] = [];

  beforeAll(async () => {
    levels = await writeSteppedHistory(db);
    const second = await openStore(other);
    await second.beginRun({ ...runStart('elsewhere'), system: { ...SYSTEM, git_sha: 'cccc0000' } });
    await second.writeProfile(profileWith('q-1', 'elsewhere', '2026-04-01T10:00:00.000Z', levels[3]!, 'cccc0000'));
    await second.close();
  });
  afterAll(cleanup);

  it('pbh history lists the planted step and the status changes, latest first, with runs and commits', async () => {
    const result = await pbh(['history', '--db', db, '--format', 'json']);
    expect(result.code, result.stderr).toBe(0);
    const rows = HistoryJson.parse(JSON.parse(result.stdout));
    expect(rows.map((r) => [r.kind, r.what, r.run_id])).toEqual([
      ['status', 'failed → ok', run(18)],
      ['status', 'ok → failed', run(17)],
      ['throughput', 'slower', run(12)],
    ]);
    expect(rows[2]).toMatchObject({ git_sha: sha(12), previous_git_sha: sha(11) });
    expect(rows[2]!.ratio).toBeLessThan(0.85);
    const table = await pbh(['history', '--db', db]);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('slower (12 → 7 points)');
    expect(table.stderr).toMatch(/1 series, 20 Profiles: 1 throughput steps, 2 status changes \(ruptures/);
  });

  it('pbh compare: no change within a level, slower across the step (exit 1 with --fail-on regression), caveats for a busy machine', async () => {
    const same = await pbh(['compare', run(2), run(5), '--db', db, '--format', 'json', '--fail-on', 'regression']);
    expect(same.code, same.stderr).toBe(0);
    expect(CompareJson.parse(JSON.parse(same.stdout))).toMatchObject([{ verdict: 'no change', regression: false }]);

    const slower = await pbh(['compare', run(5), run(14), '--db', db, '--fail-on', 'regression']);
    expect(slower.code, slower.stderr).toBe(1);
    expect(slower.stdout).toMatch(/slower/);
    expect(slower.stderr).toContain('1 regression');
    const json = CompareJson.parse(JSON.parse((await pbh(['compare', run(5), run(14), '--db', db, '--format', 'json'])).stdout))[0]!;
    expect(json.verdict).toBe('slower');
    expect(json.ci95_high!).toBeLessThan(1);

    // Run 19 was measured on a busy machine: its verdict says so.
    const busy = CompareJson.parse(JSON.parse((await pbh(['compare', run(5), run(19), '--db', db, '--format', 'json'])).stdout))[0]!;
    expect(busy.verdict).toBe('slower');
    expect(busy.caveats.join(' ')).toMatch(/candidate measured on a busy machine/);
    const busyTable = await pbh(['compare', run(5), run(19), '--db', db]);
    expect(busyTable.stdout).toContain('slower (caveat)');

    // ok -> failed counts as a regression, with why.
    const failed = CompareJson.parse(JSON.parse((await pbh(['compare', run(16), run(17), '--db', db, '--format', 'json'])).stdout))[0]!;
    expect(failed).toMatchObject({ verdict: 'not comparable', regression: true });
    expect(failed.why).toMatch(/candidate is failed/);
  });

  it('pbh compare takes commits, databases and formats, and names what it could not find', async () => {
    const commits = await pbh(['compare', `commit:${sha(3)}`, 'bbbb0013', '--db', db, '--format', 'markdown']);
    expect(commits.code, commits.stderr).toBe(0);
    expect(commits.stdout.split('\n')[0]).toMatch(/^\| cell \| baseline \(samples\/s\) \|/);
    expect(commits.stdout).toContain('| slower |');
    expect(commits.stderr).toContain(`commit ${sha(13)} (1 run)`);

    const files = await pbh(['compare', other, db, '--format', 'csv']);
    expect(files.code, files.stderr).toBe(0);
    // The newest ok Profile of the cell in db is run 19's, after the step.
    expect(files.stdout.split('\r\n')[0]).toMatch(/^cell_key,cell,baseline,candidate,ratio,/);
    expect(files.stdout).toContain('slower');

    const missing = await pbh(['compare', 'nope', run(1), '--db', db]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/"nope" is not a database file, and no run id or recorded commit in .* starts with "nope"/);
    expect(missing.stderr).toContain('run-19');
    const ambiguous = await pbh(['compare', 'run-1', run(2), '--db', db]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/ambiguous/);
    const badThreshold = await pbh(['compare', run(1), run(2), '--db', db, '--threshold', '0.5']);
    expect(badThreshold.code).toBe(2);
    expect(badThreshold.stderr).toMatch(/--threshold 0.5: must be a factor of 1 or more/);
  });
});
