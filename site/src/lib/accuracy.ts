import type { ProfileEntry } from './data.js';
import { escapeXml } from './escape.js';
import { DASH, fmtCount, fmtPct } from './format.js';

/**
 * What a Profile's score is. `accuracy`: a trained model scored against the dataset's labels (top-1, else the first
 * higher-is-better scorer). `agreement`: the fraction of samples whose argmax matches the reference engine's, the
 * only score a random-weight model has (its labels mean nothing): 100% says "same answers as the reference", not
 * "always right", so the site never calls it accuracy.
 */
export type ScoreKind = 'accuracy' | 'agreement';

export function scoreKind(p: Pick<ProfileEntry, 'accuracyMetric' | 'profile'>): ScoreKind {
  if (p.accuracyMetric?.startsWith('agreement')) return 'agreement';
  return p.profile.model?.weights === 'random' ? 'agreement' : 'accuracy';
}

/**
 * The score a page shows: the accuracy (data.ts's choice), or for a random-weight model its agreement score; a
 * random-weight model scored only against labels has nothing to show (its top-1 is chance).
 */
export function shownScore(p: ProfileEntry): { kind: ScoreKind; value: number; metric: string } | null {
  const kind = scoreKind(p);
  if (kind === 'accuracy') return p.accuracy === null ? null : { kind, value: p.accuracy, metric: p.accuracyMetric ?? 'accuracy' };
  const agreement = p.profile.scores.find((s) => s.metric === 'agreement' || s.metric.startsWith('agreement@'));
  return agreement ? { kind, value: agreement.value, metric: agreement.metric } : null;
}

/** Why an agreement is not an accuracy, for a tooltip or a note. */
export function agreementWhy(p: ProfileEntry): string {
  const reference = p.profile.correctness?.reference_engine ?? referenceEngine(p);
  return `agreement with ${reference}'s answers (argmax), not accuracy: ${p.profile.model?.weights === 'random' ? 'random weights have no labels to score against' : 'scored against the reference engine'}`;
}

/** How many samples a Profile's shown score was computed on (its scorer's count), or null where it says none. */
export function scoredSamples(p: ProfileEntry): number | null {
  const score = shownScore(p);
  if (score === null) return null;
  const samples = p.profile.scores.find((s) => s.metric === score.metric)?.samples;
  return typeof samples === 'number' && samples > 0 ? samples : null;
}

/** Wilson's 95% interval of a proportion from n samples: how far a score on few samples could be from its truth. */
export function wilson95(value: number, n: number): [number, number] {
  const z = 1.959964;
  const denominator = 1 + (z * z) / n;
  const centre = (value + (z * z) / (2 * n)) / denominator;
  const half = (z * Math.sqrt((value * (1 - value)) / n + (z * z) / (4 * n * n))) / denominator;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** The score cell of a table: the value and its sample count, and the word "agreement" where that is what it is. */
export function scoreCellHtml(p: ProfileEntry): string {
  const score = shownScore(p);
  if (score === null) return `<td${scoreKind(p) === 'agreement' ? ' title="random weights: no accuracy, and no agreement scorer ran"' : ''}>${DASH}`;
  const n = scoredSamples(p);
  const interval = n === null ? '' : `; 95% interval ${wilson95(score.value, n).map((v) => fmtPct(v)).join('–')} (Wilson, ${fmtCount(n)} samples)`;
  const of = n === null ? '' : ` <small class="sub">of ${fmtCount(n)}</small>`;
  if (score.kind === 'accuracy') return `<td data-v="${fmtPct(score.value)}" title="${escapeXml(`${score.metric}${interval}`)}">${fmtPct(score.value)}${of}`;
  return `<td data-v="${fmtPct(score.value)}" title="${escapeXml(`${agreementWhy(p)}${interval}`)}">${fmtPct(score.value)} <small class="sub">agreement${n === null ? '' : ` of ${fmtCount(n)}`}</small>`;
}

/** The engine the run compared outputs against (the config's reference_engine, onnxruntime unless it says otherwise). */
export function referenceEngine(p: Pick<ProfileEntry, 'profile'>): string {
  const experiment = (p.profile.config as { experiment?: { reference_engine?: unknown } } | null)?.experiment;
  return typeof experiment?.reference_engine === 'string' ? experiment.reference_engine : 'onnxruntime';
}

/**
 * What an entry costs in answers. `delta`: accuracy minus the reference engine's on the same model, batch size and
 * metric, with how many samples that is (`differ` of `samples`). `agreement`: a random-weight model's agreement with
 * the reference minus 1 (every answer the same), `differ` of `samples` answered otherwise. `reference`: the reference
 * engine's own Profile.
 */
export type AccuracyCost =
  | { kind: 'reference' }
  | { kind: 'delta'; delta: number; versus: ProfileEntry; samples: number | null; differ: number | null }
  | { kind: 'agreement'; delta: number; samples: number | null; differ: number | null }
  | { kind: 'none'; why: string };

const cellOf = (p: ProfileEntry): string => [p.model_name, p.batch_size, p.accuracyMetric].join('\u0000');

const isReferenceEntry = (p: ProfileEntry): boolean => p.engine_name === referenceEngine(p) && p.engine_entry === p.engine_name;

/**
 * Accuracy cost: this Profile's accuracy minus the reference engine's on the same model, batch size and metric (the
 * batch size decides which samples the accuracy pass scores, so only equal batch sizes score the same samples).
 * The reference Profile is the reference engine's unlabelled entry, its latest ok Profile there, whatever its
 * precision and hardware: the question is what an engine and precision cost against the answer everyone checks
 * against. A random-weight model's cost is its agreement with the reference: how many answers changed.
 */
export function accuracyCosts(profiles: ProfileEntry[]): Map<string, AccuracyCost> {
  const references = new Map<string, ProfileEntry>();
  for (const p of profiles) {
    if (p.status !== 'ok' || p.accuracy === null || scoreKind(p) !== 'accuracy' || !isReferenceEntry(p)) continue;
    const seen = references.get(cellOf(p));
    if (!seen || p.created_at > seen.created_at) references.set(cellOf(p), p);
  }
  const costs = new Map<string, AccuracyCost>();
  for (const p of profiles) {
    if (p.status !== 'ok') continue;
    const samples = scoredSamples(p);
    if (scoreKind(p) === 'agreement') {
      const score = shownScore(p);
      if (isReferenceEntry(p)) costs.set(p.profile_id, { kind: 'reference' });
      else if (score === null) costs.set(p.profile_id, { kind: 'none', why: 'random weights and no agreement scorer ran: nothing to compare answers with' });
      else costs.set(p.profile_id, { kind: 'agreement', delta: score.value - 1, samples, differ: samples === null ? null : Math.round((1 - score.value) * samples) });
    } else if (p.accuracy === null) costs.set(p.profile_id, { kind: 'none', why: 'not scored' });
    else {
      const versus = references.get(cellOf(p));
      if (!versus) costs.set(p.profile_id, { kind: 'none', why: `no ok ${referenceEngine(p)} Profile of this model at batch ${p.batch_size} to compare with` });
      else if (versus.profile_id === p.profile_id) costs.set(p.profile_id, { kind: 'reference' });
      else {
        const delta = p.accuracy - (versus.accuracy ?? 0);
        costs.set(p.profile_id, { kind: 'delta', delta, versus, samples, differ: samples === null ? null : Math.round(Math.abs(delta) * samples) });
      }
    }
  }
  return costs;
}

/** Percentage points, signed: −0.4 pp, +0.0 pp. */
export function fmtPoints(delta: number): string {
  const points = delta * 100;
  const text = Math.abs(points) < 0.05 ? '0.0' : Math.abs(points).toFixed(1);
  return `${points < -0.05 ? '−' : points > 0.05 ? '+' : '±'}${text} pp`;
}

/** The cost in words, points and samples: "−0.4 pp, 2 of 540 samples" or "−12.5 pp, 2 of 16 answers differ". */
export function costText(cost: AccuracyCost): string | null {
  if (cost.kind === 'none') return null;
  if (cost.kind === 'reference') return 'the reference';
  const count = cost.samples === null || cost.differ === null ? '' : cost.kind === 'agreement' ? `, ${fmtCount(cost.differ)} of ${fmtCount(cost.samples)} answers differ` : `, ${fmtCount(cost.differ)} of ${fmtCount(cost.samples)} samples`;
  return `${fmtPoints(cost.delta)}${count}`;
}

export function costCellHtml(cost: AccuracyCost | undefined): string {
  if (!cost || cost.kind === 'none') return `<td${cost ? ` title="${escapeXml(cost.why)}"` : ''}>${DASH}`;
  if (cost.kind === 'reference') return '<td data-v="0" title="The reference engine: every other entry is compared with this">ref';
  const counted = cost.samples === null || cost.differ === null ? '' : ` <small class="sub">${fmtCount(cost.differ)} of ${fmtCount(cost.samples)}${cost.kind === 'agreement' ? ' differ' : ''}</small>`;
  const title =
    cost.kind === 'agreement'
      ? 'Agreement with the reference engine minus 100%: the share of samples whose answer (argmax) differs from the reference\'s'
      : `${fmtPct(cost.versus.accuracy)} for ${cost.versus.engine_entry} (${cost.versus.precision ?? 'precision unknown'}), the reference; the count is how many samples that difference is`;
  return `<td data-v="${(cost.delta * 100).toFixed(3)}" title="${escapeXml(title)}"${cost.delta < -0.0005 ? ' class="worse"' : ''}>${fmtPoints(cost.delta)}${counted}`;
}
