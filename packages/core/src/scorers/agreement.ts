import type { Scorer } from '../contracts/scorer.js';
import { numberAt, scoredOutput } from './output.js';

function argmax(t: { data: ArrayLike<number | bigint> }, offset: number, width: number): number {
  let best = 0;
  for (let j = 1; j < width; j++) if (Number(t.data[offset + j]) > Number(t.data[offset + best])) best = j;
  return best;
}

/** Agreement with the reference engine: argmax agreement per sample and the largest absolute difference. */
export const agreement: Scorer = {
  name: 'agreement',
  description: "fraction of samples whose argmax matches the reference engine's, plus max |difference|",
  needsLabels: false,
  needsReference: true,
  score(outputs, _labels, ctx) {
    if (!ctx.reference) throw new Error('agreement needs the reference engine outputs; none were computed');
    const a = scoredOutput(outputs, ctx.outputName);
    const b = scoredOutput(ctx.reference, ctx.outputName);
    if (a.t.data.length !== b.t.data.length) throw new Error(`agreement: output sizes differ (${a.t.data.length} vs ${b.t.data.length})`);
    let same = 0;
    let maxAbs = 0;
    for (let r = 0; r < a.rows; r++) if (argmax(a.t, r * a.width, a.width) === argmax(b.t, r * b.width, b.width)) same++;
    for (let i = 0; i < a.t.data.length; i++) maxAbs = Math.max(maxAbs, Math.abs(numberAt(a.t, i) - numberAt(b.t, i)));
    return { same, total: a.rows, maxAbs };
  },
  reduce(batches) {
    const same = batches.reduce((x, b) => x + (b.same ?? 0), 0);
    const total = batches.reduce((x, b) => x + (b.total ?? 0), 0);
    const maxAbs = batches.reduce((x, b) => Math.max(x, b.maxAbs ?? 0), 0);
    return [
      { metric: 'agreement', value: total ? same / total : NaN, samples: total, higherIsBetter: true },
      { metric: 'agreement_max_abs_diff', value: maxAbs, samples: total, higherIsBetter: false },
    ];
  },
};
