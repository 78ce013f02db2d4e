import type { Scorer } from '../contracts/scorer.js';
import { numberAt, scoredOutput } from './output.js';

/**
 * Top-k accuracy: the label's logit is finite and fewer than k other logits of its row are at least as large. A tie
 * counts against the label (an all-zero row is not "100% right"), and a row holding any non-finite value is wrong.
 * k must be smaller than the number of classes: top-k over k >= classes is always right and measures nothing.
 */
export function topK(k: number): Scorer {
  return {
    name: `top${k}`,
    description: `top-${k} accuracy against integer class labels (ties and non-finite rows count as wrong)`,
    needsLabels: true,
    needsReference: false,
    score(outputs, labels, ctx) {
      if (!labels?.classes) throw new Error(`top${k} needs integer class labels; the dataset has none`);
      const { t, rows, width } = scoredOutput(outputs, ctx.outputName);
      if (k >= width) throw new Error(`top${k} on an output of ${width} classes is always right; use a k below ${width}`);
      let correct = 0;
      let nonfinite = 0;
      for (let r = 0; r < rows; r++) {
        const label = labels.classes[r]!;
        if (label < 0 || label >= width) throw new Error(`label ${label} at row ${r} is outside the model's ${width} classes`);
        const target = numberAt(t, r * width + label);
        let rivals = 0;
        let finite = true;
        for (let j = 0; j < width; j++) {
          const v = numberAt(t, r * width + j);
          if (!Number.isFinite(v)) finite = false;
          else if (j !== label && v >= target) rivals++;
        }
        if (!finite) nonfinite++;
        else if (rivals < k) correct++;
      }
      return { correct, total: rows, nonfinite };
    },
    reduce(batches) {
      const correct = batches.reduce((a, b) => a + (b.correct ?? 0), 0);
      const total = batches.reduce((a, b) => a + (b.total ?? 0), 0);
      return [{ metric: `top${k}`, value: total ? correct / total : NaN, samples: total, higherIsBetter: true }];
    },
  };
}
