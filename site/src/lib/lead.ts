import { ratioInterval } from '@pbh/core';
import type { ProfileEntry } from './data.js';
import { fmtNum } from './format.js';
import { isRanked, leaderboardOrder, rowGroups } from './leaderboard.js';

/**
 * How much faster one Profile is than another, and whether this machine can tell them apart (the 95% interval holds
 * 1). Where the two ran in the same interleaved rounds, the harness's paired ratio (the geometric mean of the
 * per-round ratios, its interval from their spread: a change of the machine hits both alike); else the ratio of the
 * mean throughputs with its interval from each Profile's sessions (core's ratioInterval: the delta method on the log,
 * Welch–Satterthwaite degrees of freedom). Null `interval` where a side has fewer than two sessions.
 */
export interface Lead {
  ratio: number;
  interval: { low: number; high: number } | null;
  tied: boolean;
  /** Rounds the paired ratio was taken over; null: from the two Profiles' sessions. */
  pairedRounds: number | null;
}

export function leadOf(faster: ProfileEntry, slower: ProfileEntry): Lead | null {
  if (faster.throughput_mean === null || slower.throughput_mean === null || !(slower.throughput_mean > 0)) return null;
  const pair = faster.profile.rounds?.pairs.find((p) => p.other_profile_id === slower.profile_id);
  if (pair) return { ratio: pair.ratio, interval: { low: pair.ci95_low, high: pair.ci95_high }, tied: pair.verdict === 'tied', pairedRounds: pair.rounds };
  const interval = ratioInterval(slower.session_throughputs, faster.session_throughputs);
  const ratio = interval?.ratio ?? faster.throughput_mean / slower.throughput_mean;
  return { ratio, interval, tied: interval !== null && interval.low <= 1 && interval.high >= 1, pairedRounds: null };
}

/** 1.48 with two decimals below 10 (where a reader compares them), three figures above. */
export const fmtRatio = (ratio: number): string => (ratio < 10 ? ratio.toFixed(2) : fmtNum(ratio));

/** "1.48× [1.41, 1.55]", or "1.48× (one session: no interval)". */
export function ratioText(lead: Lead): string {
  const interval = lead.interval ? ` [${fmtRatio(lead.interval.low)}, ${fmtRatio(lead.interval.high)}]` : ' (no interval: a side has one session)';
  return `${fmtRatio(lead.ratio)}×${interval}`;
}

/** "1.48× [1.41, 1.55] faster than openvino", or "tied on this machine with openvino: 1.02× [0.97, 1.07]". */
export function leadText(lead: Lead, than: string): string {
  return lead.tied ? `tied on this machine with ${than}: ${ratioText(lead)}` : `${ratioText(lead)} faster than ${than}`;
}

/** The engine entry with its precision where the group holds several: "openvino (bf16)". */
export const entryName = (p: ProfileEntry, withPrecision: boolean): string =>
  withPrecision && p.precision !== null ? `${p.engine_entry} (${p.precision})` : p.engine_entry;

/** One ranked group's answer: who is fastest, against whom its lead is measured, and every entry for the glance chart. */
export interface GroupAnswer {
  model: string;
  modelSlug: string;
  batch: number;
  scenario: string;
  hardware: string;
  winner: ProfileEntry;
  /** The fastest entry of another engine (else the next entry): a lead over its own other precision is not a win over a rival. */
  runnerUp: ProfileEntry | null;
  lead: Lead | null;
  /** Every ranked entry of the group, fastest first. */
  entries: ProfileEntry[];
  /** Whether the group's entries ran at more than one precision (then every name says its precision). */
  precisions: boolean;
}

/** The home page's answers: one per ranked leaderboard group (model, batch size, scenario, hardware), in its order. */
export function groupAnswers(profiles: readonly ProfileEntry[]): GroupAnswer[] {
  return rowGroups(leaderboardOrder(profiles.filter(isRanked)))
    .filter((g) => g.kind === 'ranked')
    .flatMap((g): GroupAnswer[] => {
      const entries = g.rows.filter((p) => p.throughput_mean !== null);
      const winner = entries[0];
      if (!winner) return [];
      const runnerUp = entries.find((p) => p.engine_name !== winner.engine_name) ?? entries[1] ?? null;
      return [{
        model: g.model,
        modelSlug: winner.modelSlug,
        batch: winner.batch_size,
        scenario: winner.scenario,
        hardware: g.hardware,
        winner,
        runnerUp,
        lead: runnerUp ? leadOf(winner, runnerUp) : null,
        entries,
        precisions: new Set(entries.map((p) => p.precision)).size > 1,
      }];
    });
}
