import type { Energy, EnergyDomain, EnergyMethod, TdpFacts } from '../contracts/energy.js';
import type { DomainWindow } from './reader.js';

/** One session's windows, as the meter ended them. */
export interface SessionEnergy {
  index: number;
  windows: DomainWindow[];
  /** Readers that failed in this session, in words. */
  problems: string[];
}

export interface IdleWindows {
  seconds: number;
  windows: DomainWindow[];
}

/** What the tracker hands on per session: the windows, and the meter's facts and idle baseline they are read with. */
export type TrackedEnergy = SessionEnergy & { facts: EnergyFacts; idle: IdleWindows | null };

export interface EnergyFacts {
  minTicks: number;
  unavailable: { reader: string; reason: string }[];
  tdp: TdpFacts | null;
}

/** Weakest first: a total is only as measured as the least measured of its parts. */
const STRENGTH: readonly EnergyMethod[] = ['estimated_tdp', 'nvml_power', 'nvml_energy', 'rapl'];

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

/** A domain's windows over every session, chosen once for the whole Profile (one method a domain). */
interface Chosen {
  windows: DomainWindow[];
  counted: boolean;
  notes: string[];
}

function tooFew(w: DomainWindow, minTicks: number): boolean {
  return w.method !== 'estimated_tdp' && (w.ticks === null || w.ticks < minTicks);
}

function shortOf(w: DomainWindow, session: number, minTicks: number): string {
  const period = w.updatePeriodS === null ? '' : ` (an update every ${(w.updatePeriodS * 1000).toPrecision(2)} ms)`;
  return `session ${session + 1} saw ${w.ticks ?? 'no'} counter updates in ${(w.seconds * 1000).toFixed(1)} ms${period}, fewer than min_ticks ${minTicks}`;
}

/** A GPU whose energy counter ticked too rarely in some session reports its power samples instead, in every session. */
function chooseGpu(windows: DomainWindow[], minTicks: number): Chosen {
  if (windows[0]!.method === 'nvml_power') {
    // A GPU without the counter: its power samples are held to the same rule.
    const few = windows.findIndex((w) => w.joules !== null && tooFew(w, minTicks));
    return few < 0 ? { windows, counted: true, notes: [] } : { windows: windows.map((w) => ({ ...w, joules: null })), counted: true, notes: [`power samples not reported as measured: ${shortOf(windows[few]!, few, minTicks)}`] };
  }
  const short = windows.findIndex((w) => w.method === 'nvml_energy' && (w.joules === null || tooFew(w, minTicks)));
  if (short < 0) return { windows, counted: true, notes: [] };
  const why = windows[short]!.joules === null ? `session ${short + 1}: ${windows[short]!.reason}` : shortOf(windows[short]!, short, minTicks);
  const fallback = windows.map((w) => w.fallback ?? { ...w, method: 'nvml_power' as const, joules: null, reason: 'no power samples to fall back on' });
  const shortPower = fallback.findIndex((w) => w.joules !== null && tooFew(w, minTicks));
  const replaced =
    shortPower < 0
      ? fallback
      : fallback.map((w) => ({ ...w, joules: null, reason: `power samples too: ${shortOf(fallback[shortPower]!, shortPower, minTicks)}; NVML has nothing finer and a GPU has no TDP estimate here` }));
  return { windows: replaced, counted: true, notes: [`the energy counter is not reported as measured: ${why}; power samples (nvml_power) instead`] };
}

function domainOf(name: string, chosen: Chosen, samples: number, idle: IdleWindows | null): EnergyDomain {
  const { windows } = chosen;
  const first = windows[0]!;
  const nullAt = windows.findIndex((w) => w.joules === null);
  const isEstimate = first.method === 'estimated_tdp';
  const seconds = sum(windows.map((w) => w.seconds));
  const ticks = windows.every((w) => w.ticks !== null) ? sum(windows.map((w) => w.ticks!)) : null;
  // The estimate is ticks times a constant, so sessions of less than one tick each still add up; a counter's missing session cannot.
  const joules = isEstimate ? (windows.some((w) => w.joules !== null) ? sum(windows.map((w) => w.joules ?? 0)) : null) : nullAt >= 0 ? null : sum(windows.map((w) => w.joules!));
  const periods = windows.map((w) => w.updatePeriodS).filter((p): p is number => p !== null);
  const idleOf = idle?.windows.find((w) => w.name === name);
  const idleWindow = idleOf?.method === first.method ? idleOf : idleOf?.fallback?.method === first.method ? idleOf.fallback : undefined;
  const reasons = [
    ...chosen.notes,
    ...(joules === null ? [nullAt >= 0 ? `session ${nullAt + 1}: ${windows[nullAt]!.reason}` : (first.reason ?? 'no reading')] : []),
    ...(joules !== null && isEstimate && ticks !== null && ticks < 100 ? [`coarse: ${ticks} CPU clock ticks of ${((first.updatePeriodS ?? 0.01) * 1000).toFixed(0)} ms over ${windows.length} sessions`] : []),
    ...(joules !== null && first.method === 'nvml_power' && first.reason ? [first.reason] : []),
  ];
  return {
    name,
    kind: first.kind,
    device: first.device,
    counted: chosen.counted,
    method: first.method,
    joules_per_sample: joules === null || samples === 0 ? null : joules / samples,
    mean_watts: joules === null || seconds === 0 ? null : joules / seconds,
    joules,
    seconds,
    update_period_s: periods.length ? sum(periods) / periods.length : null,
    ticks,
    idle_watts: idleWindow?.joules != null && idleWindow.seconds > 0 ? idleWindow.joules / idleWindow.seconds : null,
    reason: reasons.length ? reasons.join('; ') : null,
  };
}

function unavailableWords(facts: EnergyFacts): string {
  return facts.unavailable.map((u) => `${u.reader}: ${u.reason}`).join('; ');
}

/**
 * The Profile's energy from its sessions' windows: each domain with one method for every session; the CPU counted by
 * RAPL (package + dram per socket) when every counted RAPL domain ticked at least min_ticks times in every session,
 * else by the TDP estimate, saying why; each GPU by its energy counter, else its power samples. NULL, never 0, with
 * the reason wherever nothing could measure or estimate a figure.
 */
export function summarizeEnergy(sessions: SessionEnergy[], samplesPerSession: number[], facts: EnergyFacts, idle: IdleWindows | null): Energy {
  const samples = sum(samplesPerSession);
  const byName = new Map<string, DomainWindow[]>();
  sessions.forEach((s) => s.windows.forEach((w) => byName.set(w.name, [...(byName.get(w.name) ?? []), w])));
  const problems = [...new Set(sessions.flatMap((s) => s.problems))];
  // A domain missing from some session (its reader failed there) is NULL for the Profile.
  const complete = [...byName].map(([name, windows]) =>
    windows.length === sessions.length ? ([name, windows] as const) : ([name, windows.map((w) => ({ ...w, joules: null, reason: problems.join('; ') || 'missing from a session' }))] as const),
  );
  const rapl = complete.filter(([, ws]) => ws[0]!.method === 'rapl');
  const raplCounted = rapl.filter(([, ws]) => ws[0]!.counted);
  const estimate = complete.find(([, ws]) => ws[0]!.method === 'estimated_tdp');
  let raplWhyNot: string | null = null;
  for (const [name, ws] of raplCounted) {
    const bad = ws.findIndex((w) => w.joules === null || tooFew(w, facts.minTicks));
    if (bad >= 0) {
      raplWhyNot = `${name}: ${ws[bad]!.joules === null ? `session ${bad + 1}: ${ws[bad]!.reason}` : shortOf(ws[bad]!, bad, facts.minTicks)}`;
      break;
    }
  }
  const raplCounts = raplCounted.length > 0 && raplWhyNot === null;
  const domains: EnergyDomain[] = [];
  for (const [name, ws] of complete) {
    const method = ws[0]!.method;
    let chosen: Chosen;
    if (method === 'rapl') chosen = { windows: ws, counted: ws[0]!.counted && raplCounts, notes: ws[0]!.counted && !raplCounts && raplWhyNot ? [`not counted, the CPU is estimated instead: ${raplWhyNot}`] : [] };
    else if (method === 'estimated_tdp') chosen = { windows: ws, counted: !raplCounts, notes: raplCounts ? ['not counted: RAPL measured the CPU (kept to compare the estimate with)'] : [] };
    else chosen = chooseGpu(ws, facts.minTicks);
    domains.push(domainOf(name, chosen, samples, idle));
  }
  const counted = domains.filter((d) => d.counted);
  const measuredCpu = counted.some((d) => d.device === 'cpu');
  const missing = counted.filter((d) => d.joules === null);
  const reasons: string[] = [];
  if (!raplCounts) {
    const noCounter = raplCounted.length === 0 ? `no RAPL counter (${facts.unavailable.find((u) => u.reader === 'rapl')?.reason ?? 'no zone'})` : `RAPL not used: ${raplWhyNot}`;
    reasons.push(estimate ? `${noCounter}: the CPU is estimated from TDP (${describeTdp(facts.tdp)})` : `${noCounter}, and no TDP estimate: ${facts.unavailable.find((u) => u.reader === 'tdp')?.reason ?? 'none'}`);
  }
  for (const d of counted.filter((x) => x.device === 'gpu' && x.method === 'nvml_power' && x.joules !== null)) reasons.push(`${d.name}: power samples, not its energy counter`);
  let total: number | null = null;
  if (counted.length === 0) reasons.push(`nothing measured or estimated energy here (${unavailableWords(facts) || 'no reader'})`);
  else if (missing.length) reasons.push(`no total: ${missing.map((d) => `${d.name}: ${d.reason}`).join('; ')}`);
  else total = sum(counted.map((d) => d.joules!));
  if (total !== null && !measuredCpu) reasons.push('the CPU is not included');
  const seconds = sum(sessions.map((_, i) => Math.max(0, ...complete.map(([, ws]) => ws[i]?.seconds ?? 0))));
  const countedNames = new Set(counted.map((d) => d.name));
  const weakest = counted.length && total !== null ? STRENGTH.find((m) => counted.some((d) => d.method === m)) ?? null : null;
  return {
    joules_per_sample: total === null || samples === 0 ? null : total / samples,
    mean_watts: total === null || seconds === 0 ? null : total / seconds,
    method: weakest,
    reason: reasons.length ? reasons.join('; ') : null,
    min_ticks: facts.minTicks,
    domains,
    unavailable: [...facts.unavailable, ...problems.map((p) => ({ reader: 'session', reason: p }))],
    sessions: sessions.map((s, i) => {
      const parts = domains.filter((d) => countedNames.has(d.name)).map((d) => chosenJoules(complete, d, i));
      return { index: s.index, joules: total === null || parts.some((p) => p === null) ? null : sum(parts as number[]) || null, seconds: Math.max(0, ...s.windows.map((w) => w.seconds)) };
    }),
    idle_baseline: idle ? idleBaseline(idle, domains) : null,
    tdp: facts.tdp,
  };
}

/** A session's joules of a domain by the method the Profile chose for it (a GPU's fallback where it fell back). */
function chosenJoules(complete: (readonly [string, DomainWindow[]])[], d: EnergyDomain, session: number): number | null {
  const w = complete.find(([name]) => name === d.name)?.[1][session];
  if (!w) return null;
  const picked = w.method === d.method ? w : w.fallback?.method === d.method ? w.fallback : undefined;
  return picked?.joules ?? null;
}

function idleBaseline(idle: IdleWindows, domains: EnergyDomain[]): Energy['idle_baseline'] {
  const counted = domains.filter((d) => d.counted);
  const missing = counted.filter((d) => d.idle_watts === null);
  if (counted.length && missing.length === 0) return { seconds: idle.seconds, watts: sum(counted.map((d) => d.idle_watts!)), reason: null };
  const estimateOnly = missing.every((d) => d.method === 'estimated_tdp');
  return {
    seconds: idle.seconds,
    watts: null,
    reason: estimateOnly && missing.length
      ? 'the estimate charges only the measured processes\' CPU time, which is nil at rest: no idle figure'
      : `no idle figure for ${missing.map((d) => d.name).join(', ') || 'any counted domain'}`,
  };
}

export function describeTdp(tdp: TdpFacts | null): string {
  if (!tdp) return 'no TDP';
  const from = { table: `the TDP table's ${tdp.entry}`, user: 'pbh run --tdp-w / energy.tdp_w', default: tdp.entry ?? 'a default' }[tdp.source];
  return `${tdp.watts_per_thread.toPrecision(3)} W per logical CPU = ${tdp.watts.toPrecision(4)} W / ${tdp.threads} threads, from ${from}`;
}

/** The Profile's energy from what the tracker handed on; energy collection off says so, never a silent null. */
export function profileEnergy(tracked: readonly TrackedEnergy[], samplesPerSession: number[], enabled: boolean): Energy | null {
  if (!enabled) return offEnergy('energy collection is off (energy.enabled: false)');
  if (tracked.length === 0) return null;
  return summarizeEnergy([...tracked], samplesPerSession, tracked[0]!.facts, tracked[0]!.idle);
}

export function offEnergy(reason: string): Energy {
  return { joules_per_sample: null, mean_watts: null, method: null, reason, min_ticks: 1, domains: [], unavailable: [], sessions: [], idle_baseline: null, tdp: null };
}
