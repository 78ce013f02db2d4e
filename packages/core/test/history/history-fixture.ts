import type { Profile } from '../../src/contracts/profile.js';
import { profileVerdicts } from '../../src/publish/verdicts.js';
import { openStore } from '../../src/store/index.js';
import { makeProfile, runStart, statsOf, SYSTEM } from '../store/profile-fixture.js';
import { synthetic } from './synthetic.js';

/** A Profile of the fixture cell with these session throughputs (500 ms sessions: never noisy by duration); null sessions: failed. */
export function profileWith(id: string, runId: string, createdAt: string, sessions: number[] | null, gitSha: string, busy = false): Profile {
  const base = makeProfile({ profileId: id, runId, batchesPerSession: 2, sessions: sessions?.length ?? 5, status: sessions ? 'ok' : 'failed' });
  const measured = base.sessions.map((s, i) => ({ ...s, wall_ns: 5e8, throughput_sps: sessions![i]! }));
  const p: Profile = {
    ...base,
    created_at: createdAt,
    system: { ...SYSTEM, git_sha: gitSha },
    sessions: measured,
    throughput: sessions ? statsOf(sessions) : null,
    interference: sessions ? { other_cpu_share: busy ? 0.6 : 0.01, steal_share: 0, load_avg_1m: busy ? 3 : 0.1, busy, threshold: 0.25, sessions: [] } : null,
  };
  // Judged as the harness judges a Profile it assembles.
  return { ...p, verdicts: sessions ? profileVerdicts(p) : null };
}

export const runOf = (i: number): string => `run-${String(i).padStart(2, '0')}`;
/** Commits aaaa… before the step, bbbb… from run 12 on. */
export const shaOf = (i: number): string => `${i < 12 ? 'aaaa' : 'bbbb'}${String(i).padStart(4, '0')}`;

/**
 * 20 runs of one cell into `db`: level 1000 until run 12, then 10 session sigmas (20 samples/s each) slower; run 17
 * fails; run 19 was measured on a busy machine. Returns the session throughputs per run.
 */
export async function writeSteppedHistory(db: string): Promise<number[][]> {
  const levels = synthetic(77, 20, [{ at: 12, sigmas: -10 }]);
  const store = await openStore(db);
  try {
    for (let i = 0; i < 20; i++) {
      const day = `2026-03-${String(i + 1).padStart(2, '0')}`;
      await store.beginRun({ ...runStart(runOf(i)), started_at: `${day}T10:00:00.000Z`, system: { ...SYSTEM, git_sha: shaOf(i) } });
      await store.writeProfile(profileWith(`p-${i}`, runOf(i), `${day}T10:05:00.000Z`, i === 17 ? null : levels[i]!, shaOf(i), i === 19));
      await store.finishRun(runOf(i));
    }
  } finally {
    await store.close();
  }
  return levels;
}
