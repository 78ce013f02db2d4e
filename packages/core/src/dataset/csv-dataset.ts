import path from 'node:path';
import type { Dataset, RawBatch } from '../contracts/dataset.js';
import type { Labels } from '../contracts/scorer.js';
import { DatasetError } from './errors.js';
import { manifestHash } from './manifest.js';
import { readDatasetFile } from './read-file.js';
import { sliceLabels } from './npy-dataset.js';
import { sliceRows } from './tensor-slice.js';

/** A decimal number as written in a data file; anything else (an empty cell, 0x10, Infinity) is NaN, never 0 or 16. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
function decimal(cell: string | undefined): number {
  const text = (cell ?? '').trim();
  return DECIMAL.test(text) ? Number(text) : Number.NaN;
}

/** Numeric CSV with a header: features become one float32 [samples, features] input named "features". */
export async function loadCsvDataset(opts: {
  name: string;
  file: string;
  labelColumn?: string;
  featureColumns?: string[];
  limit?: number;
}): Promise<Dataset> {
  let text: string;
  let bytes: Buffer;
  bytes = await readDatasetFile(opts.file, `dataset file ${opts.file} cannot be read (missing?). Check dataset.path; it is relative to the config file.`);
  text = bytes.toString('utf8');
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length < 2) throw new DatasetError(`${opts.file} is empty: it needs a header line and at least one row.`);
  const header = lines[0]!.split(',').map((s) => s.trim());
  const labelIdx = opts.labelColumn ? header.indexOf(opts.labelColumn) : -1;
  if (opts.labelColumn && labelIdx < 0) {
    throw new DatasetError(`${opts.file}: label_column "${opts.labelColumn}" is not in the header (${header.join(', ')}).`);
  }
  const featureNames = opts.featureColumns ?? header.filter((_, i) => i !== labelIdx);
  const featureIdx = featureNames.map((f) => {
    const i = header.indexOf(f);
    if (i < 0) throw new DatasetError(`${opts.file}: feature column "${f}" is not in the header (${header.join(', ')}).`);
    return i;
  });
  const rows = lines.length - 1;
  const features = new Float32Array(rows * featureIdx.length);
  const classes = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    const cells = lines[r + 1]!.split(',');
    featureIdx.forEach((ci, j) => {
      const v = decimal(cells[ci]);
      if (!Number.isFinite(v)) {
        const cell = (cells[ci] ?? '').trim();
        throw new DatasetError(`${opts.file}: line ${r + 2}, column "${header[ci]}": ${cell ? `"${cell}" is not a decimal number` : 'the cell is empty'}. Fill or drop that row.`);
      }
      features[r * featureIdx.length + j] = v;
    });
    if (labelIdx >= 0) {
      const v = decimal(cells[labelIdx]);
      if (!Number.isInteger(v)) {
        const cell = (cells[labelIdx] ?? '').trim();
        throw new DatasetError(`${opts.file}: line ${r + 2}: ${cell ? `label "${cell}" is not an integer class` : 'the label is empty'}. Fill or drop that row.`);
      }
      classes[r] = v;
    }
  }
  const tensor = { dtype: 'float32' as const, dims: [rows, featureIdx.length], data: features };
  const labels: Labels | undefined = labelIdx >= 0 ? { classes } : undefined;
  return {
    name: opts.name,
    manifestSha256: manifestHash([{ name: path.basename(opts.file), bytes }]),
    size: opts.limit ? Math.min(opts.limit, rows) : rows,
    inputNames: ['features'],
    hasLabels: labels !== undefined,
    read(start: number, count: number): RawBatch {
      return { inputs: { features: sliceRows(tensor, start, count) }, labels: sliceLabels(labels, start, count), count };
    },
  };
}
