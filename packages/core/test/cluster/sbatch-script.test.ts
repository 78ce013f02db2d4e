import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { arraySpec, jobName, renderSbatchScript } from '../../src/cluster/sbatch-script.js';
import type { SweepFile } from '../../src/cluster/sweep-file.js';

const sweep = (over: Partial<SweepFile> = {}, slurm: Partial<SweepFile['slurm']> = {}): SweepFile => ({
  version: 1,
  name: 'digits study',
  config: '/shared/pbh/configs/digits.yaml',
  config_sha256: 'f'.repeat(64),
  cwd: '/shared/pbh',
  created_at: '2026-12-01T10:00:00.000Z',
  node: '/opt/node-20/bin/node',
  pbh: '/shared/pbh/packages/core/dist/cli/main.js',
  slurm: { partition: null, time: null, cpus_per_task: null, exclusive: true, max_parallel: null, ...slurm },
  cells: ['0123456789abcdef', 'fedcba9876543210', '00000000000000aa'].map((key, i) => ({ key, label: `cell ${i}` })),
  submissions: [],
  ...over,
});

describe('the sbatch script of a sweep', () => {
  it('lists array tasks as Slurm ranges, with %N for --max-parallel', () => {
    expect(arraySpec([0, 1, 2, 3], null)).toBe('0-3');
    expect(arraySpec([7, 0, 2, 1, 9, 8], 2)).toBe('0-2,7-9%2');
    expect(arraySpec([4], 1)).toBe('4%1');
    expect(jobName('digits study/v2')).toBe('pbh-digits_study_v2');
  });

  it('runs cell SLURM_ARRAY_TASK_ID with pbh run --only into its own shard, every path absolute', () => {
    const script = renderSbatchScript(sweep({}, { partition: 'cpu', time: '1:00:00', cpus_per_task: 16, max_parallel: 4 }), '/shared/sweeps/digits', [0, 1, 2]);
    const directives = script.split('\n').filter((l) => l.startsWith('#SBATCH '));
    expect(directives).toEqual([
      '#SBATCH --job-name=pbh-digits_study',
      '#SBATCH --array=0-2%4',
      '#SBATCH --output=/shared/sweeps/digits/logs/%A_%a.log',
      '#SBATCH --chdir=/shared/pbh',
      '#SBATCH --nodes=1',
      '#SBATCH --ntasks=1',
      '#SBATCH --partition=cpu',
      '#SBATCH --time=1:00:00',
      '#SBATCH --cpus-per-task=16',
      '#SBATCH --exclusive',
    ]);
    expect(script).toContain('keys=(0123456789abcdef fedcba9876543210 00000000000000aa)');
    expect(script).toContain(
      'exec /opt/node-20/bin/node /shared/pbh/packages/core/dist/cli/main.js run /shared/pbh/configs/digits.yaml --only "$key" --db /shared/sweeps/digits/shards/"$key".duckdb',
    );
    const shared = renderSbatchScript(sweep({}, { exclusive: false }), '/shared/sweeps/digits', [1]);
    expect(shared).not.toContain('--exclusive');
    expect(shared).toContain('#SBATCH --array=1\n');
  });

  it('is a bash script that picks the task\u2019s key and quotes odd paths', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pbh-sbatch-'));
    try {
      const odd = sweep({ config: "/shared/it's here/c.yaml", cwd: '/shared/with space', node: '/bin/echo' });
      const script = renderSbatchScript(odd, '/shared/sw eeps', [0, 1, 2]);
      expect(script).toContain('#SBATCH --chdir="/shared/with space"');
      const file = join(dir, 'task.sh');
      writeFileSync(file, script);
      // node replaced by echo: the line the task would exec, with the key of task 1 filled in.
      const out = execFileSync('bash', [file], { env: { PATH: process.env.PATH, SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_JOB_ID: '42' } }).toString();
      expect(out.split('\n')[0]).toMatch(/^pbh sweep: task 1 of job 42, cell fedcba9876543210, on /);
      expect(out.split('\n')[1]).toBe(
        "/shared/pbh/packages/core/dist/cli/main.js run /shared/it's here/c.yaml --only fedcba9876543210 --db /shared/sw eeps/shards/fedcba9876543210.duckdb",
      );
      expect(() => renderSbatchScript(sweep({ cwd: '/shared/"quoted"' }), '/x', [0])).toThrow(/double quote or a line break/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
