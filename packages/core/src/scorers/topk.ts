import type { Scorer } from '../contracts/scorer.js';
import { numberAt, scoredOutput } from './output.js';

/** Top-k accuracy: the label is among the k largest logits of its row. Ties count in the label's favour only if strictly fewer than k values beat it. */
export function topK(k: number): Scorer {
  return {
    name: `top${k}`,
    description: `top-${k} accuracy against integer class labels`,
    needsLabels: true,
    needsReference: false,
    score(outputs, labels, ctx) {
      if (!labels?.classes) throw new Error(`top${k} needs integer class labels; the dataset has none`);
      const { t, rows, width } = scoredOutput(outputs, ctx.outputName);
      let correct = 0;
      for (let r = 0; r < rows; r++) {
        const label = labels.classes[r]!;
        if (label < 0 || label >= width) throw new Error(`label ${label} at row ${r} is outside the model's ${width} classes`);
        const target = numberAt(t, r * width + label);
        let greater = 0;
        for (let j = 0; j < width; j++) if (numberAt(t, r * width + j) > target) greater++;
        if (greater < k) correct++;
      }
      return { correct, total: rows };
    },
    reduce(batches) {
      const correct = batches.reduce((a, b) => a + (b.correct ?? 0), 0);
      const total = batches.reduce((a, b) => a + (b.total ?? 0), 0);
      return [{ metric: `top${k}`, value: total ? correct / total : NaN, samples: total, higherIsBetter: true }];
    },
  };
}
