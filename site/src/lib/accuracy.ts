import type { ProfileEntry } from './data.js';
import { escapeXml } from './escape.js';
import { DASH, fmtPct } from './format.js';

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

/** The score cell of a table: the value, and the word "agreement" under it where that is what it is. */
export function scoreCellHtml(p: ProfileEntry): string {
  const score = shownScore(p);
  if (score === null) return `<td${scoreKind(p) === 'agreement' ? ' title="random weights: no accuracy, and no agreement scorer ran"' : ''}>${DASH}`;
  if (score.kind === 'accuracy') return `<td title="${escapeXml(score.metric)}">${fmtPct(score.value)}`;
  return `<td data-v="${fmtPct(score.value)}" title="${escapeXml(agreementWhy(p))}">${fmtPct(score.value)} <small class="sub">agreement</small>`;
}

/** The engine the run compared outputs against (the config's reference_engine, onnxruntime unless it says otherwise). */
export function referenceEngine(p: Pick<ProfileEntry, 'profile'>): string {
  const experiment = (p.profile.config as { experiment?: { reference_engine?: unknown } } | null)?.experiment;
  return typeof experiment?.reference_engine === 'string' ? experiment.reference_engine : 'onnxruntime';
}

export type AccuracyCost = { kind: 'reference' } | { kind: 'delta'; delta: number; versus: ProfileEntry } | { kind: 'none'; why: string };

const cellOf = (p: ProfileEntry): string => [p.model_name, p.batch_size, p.accuracyMetric].join('\u0000');

/**
 * Accuracy cost: this Profile's accuracy minus the reference engine's on the same model, batch size and metric (the
 * batch size decides which samples the accuracy pass scores, so only equal batch sizes score the same samples).
 * The reference Profile is the reference engine's unlabelled entry, its latest ok Profile there, whatever its
 * precision and hardware: the question is what an engine and precision cost against the answer everyone checks
 * against. Only trained models have one; agreement is its own measure of the same thing.
 */
export function accuracyCosts(profiles: ProfileEntry[]): Map<string, AccuracyCost> {
  const references = new Map<string, ProfileEntry>();
  for (const p of profiles) {
    if (p.status !== 'ok' || p.accuracy === null || scoreKind(p) !== 'accuracy') continue;
    if (p.engine_name !== referenceEngine(p) || p.engine_entry !== p.engine_name) continue;
    const seen = references.get(cellOf(p));
    if (!seen || p.created_at > seen.created_at) references.set(cellOf(p), p);
  }
  const costs = new Map<string, AccuracyCost>();
  for (const p of profiles) {
    if (p.status !== 'ok') continue;
    if (p.accuracy === null) costs.set(p.profile_id, { kind: 'none', why: 'not scored' });
    else if (scoreKind(p) === 'agreement') costs.set(p.profile_id, { kind: 'none', why: 'agreement, not accuracy: the agreement column is the cost' });
    else {
      const versus = references.get(cellOf(p));
      if (!versus) costs.set(p.profile_id, { kind: 'none', why: `no ok ${referenceEngine(p)} Profile of this model at batch ${p.batch_size} to compare with` });
      else if (versus.profile_id === p.profile_id) costs.set(p.profile_id, { kind: 'reference' });
      else costs.set(p.profile_id, { kind: 'delta', delta: p.accuracy - (versus.accuracy ?? 0), versus });
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

export function costCellHtml(cost: AccuracyCost | undefined): string {
  if (!cost || cost.kind === 'none') return `<td${cost ? ` title="${escapeXml(cost.why)}"` : ''}>${DASH}`;
  if (cost.kind === 'reference') return '<td data-v="0" title="The reference engine: every other entry is compared with this">ref';
  const title = `${fmtPct(cost.versus.accuracy)} for ${cost.versus.engine_entry} (${cost.versus.precision ?? 'precision unknown'}), the reference`;
  return `<td data-v="${(cost.delta * 100).toFixed(3)}" title="${escapeXml(title)}"${cost.delta < -0.0005 ? ' class="worse"' : ''}>${fmtPoints(cost.delta)}`;
}
