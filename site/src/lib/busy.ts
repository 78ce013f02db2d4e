import type { PublishedProfile } from '@pbh/core';
import { fmtPct } from './format.js';

/**
 * The busy-machine mark: the Profile's sessions ran while other processes used a share of the CPU at or above the
 * harness's threshold (core's system/interference.ts), so its figure is the machine's that day, not the engine's.
 */
export interface Busy {
  busy: boolean;
  /** "busy machine: 41% of the CPU went to other processes" (and steal, where any); empty when not busy. */
  text: string;
}

/** The verdict stored with the Profile (judged once at assembly); the interference figures put it in words. */
export function busyOf(p: { profile: Pick<PublishedProfile['profile'], 'interference' | 'verdicts'> }): Busy {
  const i = p.profile.interference;
  if (!p.profile.verdicts?.busy || !i) return { busy: false, text: '' };
  const steal = i.steal_share > 0.005 ? `, ${fmtPct(i.steal_share, 0)} stolen by the hypervisor` : '';
  return { busy: true, text: `busy machine: ${fmtPct(i.other_cpu_share, 0)} of the CPU went to other processes${steal} (load average ${i.load_avg_1m.toFixed(2)})` };
}

/** The rule in words, for page notes and the glossary. */
export const BUSY_RULE =
  'busy: while the sessions ran, processes other than the harness and the model\'s own took (with hypervisor steal) ' +
  'at least 10% of the machine\'s CPU time, read from /proc/stat around each session. Fix: rerun with nothing else busy.';

/**
 * The door a Profile was measured through: every worker engine is timed by the same loop (pbh_worker's), whatever its
 * binding; an in-process engine by the harness's loop around its own binding. Two engines measured through different
 * doors are not ranked side by side without saying so.
 */
export function doorOf(p: { profile: Pick<PublishedProfile['profile'], 'engine'> }): string | null {
  const { process, binding } = p.profile.engine;
  if (!process) return null;
  return process === 'worker' ? "a worker's loop" : `the harness's process${binding ? ` through ${binding}` : ''}`;
}

/** Where the model ran, in words, for a Profile page. */
export function placeOf(p: { profile: Pick<PublishedProfile['profile'], 'engine'> }): string | null {
  const { process, binding } = p.profile.engine;
  if (!process) return null;
  return `${process === 'worker' ? 'in a worker' : "in the harness's process"}${binding ? ` through ${binding}` : ''}`;
}
