import { createHash } from 'node:crypto';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Profile, Rounds } from '../contracts/profile.js';
import type { Cell } from '../config/keys.js';
import { detectBreaks, MIN_SEGMENT } from '../history/detect.js';
import { contenderSession, finishContender, stageContender, type Contender } from './contender.js';
import type { SweepContext } from './context.js';
import type { Deadline } from './deadline.js';
import { leadOf, pairsOf } from './paired.js';
import { runRounds, type RoundMember, type Settle } from './rounds.js';
import type { RoundsConfig } from '../config/schema.js';
import { QUIET_WINDOW_MS, waitQuiet } from '../system/quiet.js';

/** What the sweep lends a group: each cell's deadline, a guard around every call (the watchdog), and whether to stop. */
export interface GroupHooks {
  deadlineFor(cell: Cell): Deadline;
  guard?<T>(cell: Cell, deadline: Deadline, op: () => Promise<T>): Promise<T>;
  /** A contender is about to be staged, or finished (progress lines). */
  onContender?(cell: Cell, phase: 'stage' | 'finish'): void;
  interrupted?(): boolean;
}

/** Share of a cell's timeout kept for what follows the rounds (transport probe, accuracy pass, probes). */
const FINISH_RESERVE = 0.25;

/** The seed of one bank's orders: the experiment's seed with the bank's first cell, so groups do not share orders. */
function bankSeed(seed: number, cell: Cell, bank: number): number {
  return createHash('sha256').update(`${seed}\0${cell.key}\0${bank}`).digest().readUInt32LE(0);
}

/** Cells that are compared with one another: one model, batch size and scenario, across engines and precisions. */
export function groupKey(cell: Cell, scenario: string): string {
  return `${cell.model.name}\0${cell.batchSize}\0${scenario}`;
}

type Shifts = { shifts: Rounds['level_shifts']; note: string | null };

/**
 * Level shifts within each contender's session throughputs, one Python process for the bank (python/changepoints:
 * ruptures' PELT, as History uses). Started as soon as the rounds end, so it runs beside the accuracy passes.
 */
async function levelShifts(ctx: SweepContext, series: readonly number[][]): Promise<Shifts[]> {
  const out: Shifts[] = series.map((values) => ({ shifts: [], note: `${values.length} sessions: a level needs ${MIN_SEGMENT} at least, so no shift can be told from noise` }));
  const asked = series.flatMap((values, i) => {
    if (values.length < 2 * MIN_SEGMENT) return [];
    const mean = values.reduce((a, v) => a + v, 0) / values.length;
    // Floor of the noise: 1% of the mean, so a shift under 1% is never reported as one.
    return [{ id: String(i), values, floor: 0.01 * mean }];
  });
  if (asked.length === 0) return out;
  try {
    const found = await (ctx.detectShifts ?? detectBreaks)(asked);
    for (const s of found.series) {
      const values = series[Number(s.id)]!;
      const bounds = [0, ...s.breaks, values.length];
      const mean = (a: number, b: number): number => values.slice(a, b).reduce((x, v) => x + v, 0) / (b - a);
      const shifts = s.breaks.map((b, k) => {
        const before = mean(bounds[k]!, b);
        const after = mean(b, bounds[k + 2]!);
        return { session: b, before, after, ratio: after / before };
      });
      out[Number(s.id)] = { shifts, note: `${found.library} ${found.method}, penalty ${s.penalty.toPrecision(3)}` };
    }
  } catch (e) {
    for (const a of asked) out[Number(a.id)] = { shifts: null, note: `level shifts not detected: ${(e as Error).message.split('\n')[0]}` };
  }
  return out;
}

/**
 * settle_ms idle, its last QUIET_WINDOW_MS the first look at whether the bank's processes (every prepared copy's,
 * PBH's own where a runtime runs in it) are quiet; then up to settle_max_ms more until they are.
 */
function quietSettle(cfg: RoundsConfig, bank: readonly Contender[]): Settle {
  return async () => {
    if (cfg.settle_max_ms === 0) {
      await sleep(cfg.settle_ms);
      return { waitedMs: 0, quiet: true };
    }
    const pids = [...new Set(bank.flatMap((c) => [c.prepared, ...c.replicas].flatMap((m) => (m ? [m.runsIn.pid] : []))))];
    await sleep(Math.max(0, cfg.settle_ms - QUIET_WINDOW_MS));
    const waited = await waitQuiet(pids, cfg.settle_max_ms + QUIET_WINDOW_MS);
    return { waitedMs: Math.max(0, waited.waitedMs - Math.min(cfg.settle_ms, QUIET_WINDOW_MS)), quiet: waited.quiet };
  };
}

function formedText(bank: readonly Contender[], index: number, more: string | null, interleave: boolean, cfg: RoundsConfig): string {
  const first = bank[0]!;
  const what = `${first.cell.model.name} batch ${first.cell.batchSize}`;
  if (first.profile.workload.scenario === 'server' || first.profile.workload.scenario === 'offline') {
    return `alone: the ${first.profile.workload.scenario} scenario plans its sessions as one open schedule (arrivals, peak search), so they are not interleaved`;
  }
  if (bank.length === 1) return interleave ? `alone: the only ${what} cell this run measured` : 'alone: rounds.interleave is false';
  const banks = index > 0 || more ? `; bank ${index + 1} (${more ?? 'the rest of the group'})` : '';
  const quiet = cfg.settle_max_ms > 0 ? `, then up to ${cfg.settle_max_ms} ms more until the resident processes are quiet` : '';
  return `${bank.length} contenders for ${what} prepared and resident together, one session each a round in a seeded random order, ${cfg.settle_ms} ms idle whenever the next session runs on another contender or on another copy of one${quiet}${banks}`;
}

/**
 * Runs a group of cells that are compared with one another: each contender staged (planned, prepared, gated, its set
 * resident and warm), then interleaved rounds of sessions, then each finished and assembled; paired ratios, the lead
 * claim and level shifts go on every Profile. Where memory or rounds.max_resident does not allow every contender
 * resident at once, the group runs in banks, each with its own rounds. Never throws: a contender that fails becomes
 * its failed Profile and the others go on.
 */
export async function runGroup(ctx: SweepContext, cells: readonly Cell[], hooks: GroupHooks): Promise<Profile[]> {
  const exp = ctx.loaded.experiment;
  const cfg = exp.rounds;
  const guard = <T>(c: { cell: Cell; deadline: Deadline }, op: () => Promise<T>): Promise<T> => (hooks.guard ? hooks.guard(c.cell, c.deadline, op) : op());
  const profiles: Profile[] = [];
  const pending = [...cells];
  for (let bankIndex = 0; pending.length > 0 && !hooks.interrupted?.(); bankIndex++) {
    const bank: Contender[] = [];
    let more: string | null = null;
    while (pending.length > 0 && !hooks.interrupted?.()) {
      const cell = pending.shift()!;
      const deadline = hooks.deadlineFor(cell);
      hooks.onContender?.(cell, 'stage');
      bank.push(await guard({ cell, deadline }, () => stageContender(ctx, cell, deadline)));
      if (pending.length === 0) break;
      const freeMb = os.freemem() / 2 ** 20;
      if (bank.length >= cfg.max_resident) more = `rounds.max_resident is ${cfg.max_resident}`;
      else if (freeMb < cfg.min_free_memory_mb) more = `${freeMb.toFixed(0)} MiB free after ${bank.length} resident, under rounds.min_free_memory_mb ${cfg.min_free_memory_mb}`;
      if (more) break;
    }
    const seed = bankSeed(exp.seed, bank[0]!.cell, bankIndex);
    const streams = bank.filter((c) => !c.done && c.perf?.stream);
    const members: RoundMember[] = streams.map((c) => {
      const sessions = c.perf!.stream!.sessions;
      return {
        sessions: () => sessions,
        copy: () => c.perf!.stream!.nextReplica,
        alive: () => !c.done,
        session: () => guard(c, () => contenderSession(ctx, c)),
        secondsLeft: () => (c.deadline.endsAtMs - Date.now()) / 1000 - FINISH_RESERVE * exp.timeout_s,
      };
    });
    const outcome = await runRounds(
      members,
      exp.sessions,
      cfg,
      seed,
      (r) => ctx.onProgress?.({ kind: 'phase', phase: `round ${r + 1} of ${members.length} contender${members.length > 1 ? 's' : ''}` }),
      quietSettle(cfg, bank),
    );
    const replicas = streams.map((c) => c.perf?.stream?.replicas ?? 1);
    const detecting = levelShifts(ctx, streams.map((c) => (c.done ? [] : c.perf!.stream!.sessions.map((x) => x.throughput_sps))));
    for (const c of bank) {
      hooks.onContender?.(c.cell, 'finish');
      await guard(c, () => finishContender(ctx, c));
    }
    const measured = streams.map((c) => c.profile);
    const shifts = await detecting;
    const contenders = streams.map((c) => c.cell.key);
    streams.forEach((c, i) => {
      const p = c.profile;
      if (p.status !== 'ok') return;
      const pairs = pairsOf(p, measured);
      const shift = shifts[i];
      p.rounds = {
        contenders,
        formed: formedText(cfg.interleave ? bank : [c], bankIndex, more, cfg.interleave, cfg) + (replicas[i]! > 1 ? `; each contender in ${replicas[i]} prepared copies, its sessions alternating among them` : ''),
        replicas: replicas[i]!,
        seed,
        orders: outcome.orders,
        stopped: outcome.stopped[i]!,
        target_ci_half_width: cfg.target_ci,
        ci_half_width: outcome.ciHalfWidth[i]!,
        budget_s: cfg.budget_s,
        spent_s: outcome.spentS[i]!,
        settle_wait_ms: outcome.settleWaitMs[i]!,
        settle_busy: outcome.settleBusy[i]!,
        level_shifts: shift?.shifts ?? null,
        level_shifts_note: shift?.note ?? null,
        pairs,
        lead: leadOf(p, measured, pairs),
      };
    });
    // Server and offline contenders ran their open schedule while staged: no rounds, the config's session count.
    profiles.push(...bank.map((c) => c.profile));
  }
  return profiles;
}
