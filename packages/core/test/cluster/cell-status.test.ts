import { describe, expect, it } from 'vitest';
import { cellStatus, type ShardView } from '../../src/cluster/cell-status.js';
import { parseTaskStates } from '../../src/cluster/slurm.js';
import type { ProfileSummary } from '../../src/store/index.js';

const KEY = '0123456789abcdef';

function summary(id: string, status: ProfileSummary['status'], key = KEY): ProfileSummary {
  return {
    profile_id: id, run_id: 'r', cell_key: key, created_at: '2026-12-01T10:00:00.000Z', status,
    error: status === 'ok' ? null : 'interrupted (SIGTERM)', model_name: 'm', engine_name: 'onnxruntime', engine_version: '1',
    device: 'cpu', batch_size: 1, throughput_sps: null, predict_p50_ms: null, predict_p99_ms: null,
  };
}
const shard = (...profiles: ProfileSummary[]): ShardView => ({ kind: 'profiles', profiles });
const state = (slurm: string | null, view: ShardView, task: string | null = '7_0') => cellStatus(0, KEY, 'cell', task, slurm, view).state;

describe('a sweep cell\u2019s state', () => {
  it('is ok once its shard holds an ok Profile, whatever Slurm says', () => {
    expect(state('FAILED', shard(summary('a', 'failed'), summary('b', 'ok')))).toBe('ok');
    expect(state(null, shard(summary('b', 'ok')), null)).toBe('ok');
    // An ok Profile of another cell does not count.
    expect(state(null, shard(summary('b', 'ok', 'ffffffffffffffff')))).toBe('missing');
  });

  it('is pending or running while Slurm (or the shard\u2019s lock) says so, even over an earlier failed Profile', () => {
    expect(state('PENDING', shard(summary('a', 'failed')))).toBe('pending');
    expect(state('RUNNING', { kind: 'absent' })).toBe('running');
    expect(state('COMPLETING', { kind: 'absent' })).toBe('running');
    expect(state(null, { kind: 'locked' })).toBe('running');
  });

  it('is failed when a Profile says why or Slurm says the task ended badly, and missing when nothing is known', () => {
    const failed = cellStatus(0, KEY, 'cell', '7_0', 'CANCELLED', shard(summary('a', 'failed')));
    expect(failed.state).toBe('failed');
    expect(failed.detail).toBe('Profile failed: interrupted (SIGTERM) (Slurm: CANCELLED)');
    expect(state('CANCELLED', { kind: 'absent' })).toBe('failed');
    expect(state('TIMEOUT', { kind: 'absent' })).toBe('failed');
    expect(state(null, shard(summary('a', 'skipped')))).toBe('failed');
    expect(state('COMPLETED', { kind: 'unreadable', reason: 'it is an empty file' })).toBe('failed');
    expect(state('RUNNING', { kind: 'unreadable', reason: 'it is an empty file' })).toBe('running');
    expect(state('COMPLETED', { kind: 'absent' })).toBe('missing');
    expect(state(null, { kind: 'absent' })).toBe('missing');
    expect(cellStatus(0, KEY, 'cell', null, null, { kind: 'absent' }).detail).toBe('never submitted');
  });
});

describe('what squeue and sacct print', () => {
  it('reads task states by JOB_TASK for the sweep\u2019s jobs only, pending ranges expanded', () => {
    const squeue = ['12_[3-5,9%2]|PENDING', '12_1|RUNNING', '77_0|RUNNING', ''].join('\n');
    expect([...parseTaskStates(squeue, new Set(['12']))]).toEqual([
      ['12_3', 'PENDING'], ['12_4', 'PENDING'], ['12_5', 'PENDING'], ['12_9', 'PENDING'], ['12_1', 'RUNNING'],
    ]);
    const sacct = ['12_0|CANCELLED by 0', '12_2|COMPLETED', '12_6|FAILED', '12.batch|COMPLETED'].join('\n');
    expect(Object.fromEntries(parseTaskStates(sacct, new Set(['12'])))).toEqual({ '12_0': 'CANCELLED', '12_2': 'COMPLETED', '12_6': 'FAILED' });
  });
});
