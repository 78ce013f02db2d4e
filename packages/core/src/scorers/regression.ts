import type { Scorer } from '../contracts/scorer.js';
import { numberAt, scoredOutput } from './output.js';

function errorScorer(name: 'mse' | 'mae'): Scorer {
  return {
    name,
    description: name === 'mse' ? 'mean squared error against float targets' : 'mean absolute error against float targets',
    needsLabels: true,
    needsReference: false,
    score(outputs, labels, ctx) {
      if (!labels?.targets) throw new Error(`${name} needs float targets as labels; the dataset has ${labels?.classes ? 'class labels' : 'none'}`);
      const { t } = scoredOutput(outputs, ctx.outputName);
      if (t.data.length !== labels.targets.length) {
        throw new Error(`${name}: the output has ${t.data.length} values but the targets ${labels.targets.length}`);
      }
      let sum = 0;
      for (let i = 0; i < labels.targets.length; i++) {
        const d = numberAt(t, i) - labels.targets[i]!;
        sum += name === 'mse' ? d * d : Math.abs(d);
      }
      return { sum, count: labels.targets.length, samples: t.dims[0] ?? 0 };
    },
    reduce(batches) {
      const sum = batches.reduce((a, b) => a + (b.sum ?? 0), 0);
      const count = batches.reduce((a, b) => a + (b.count ?? 0), 0);
      const samples = batches.reduce((a, b) => a + (b.samples ?? 0), 0);
      return [{ metric: name, value: count ? sum / count : NaN, samples, higherIsBetter: false }];
    },
  };
}

export const mse = errorScorer('mse');
export const mae = errorScorer('mae');
