import path from 'node:path';
import { PNG } from 'pngjs';
import type { Dataset, Image, RawBatch } from '../contracts/dataset.js';
import { DatasetError } from './errors.js';
import { readDatasetFile } from './read-file.js';
import { manifestHash } from './manifest.js';
import { sliceLabels } from './npy-dataset.js';

/** Decodes a PNG to HWC float32 (0..255 for 8-bit, 0..65535 for 16-bit); alpha is dropped. */
export function decodePng(bytes: Buffer, file: string): Image {
  let png: PNG;
  try {
    png = PNG.sync.read(bytes);
  } catch (e) {
    throw new DatasetError(`${file} is not a readable PNG (${(e as Error).message}). The image-folder dataset reads PNG files.`);
  }
  // pngjs always expands to RGBA; a greyscale source has R = G = B.
  const { width, height, data } = png;
  const grey = (png as PNG & { color?: boolean }).color === false;
  const channels = grey ? 1 : 3;
  const out = new Float32Array(width * height * channels);
  for (let i = 0, o = 0; i < width * height; i++) {
    out[o++] = data[i * 4]!;
    if (!grey) {
      out[o++] = data[i * 4 + 1]!;
      out[o++] = data[i * 4 + 2]!;
    }
  }
  return { data: out, height, width, channels };
}

function parseLabels(text: string, file: string): { file: string; label: number }[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const header = lines[0]?.split(',').map((s) => s.trim());
  if (!header || header[0] !== 'file' || header[1] !== 'label') {
    throw new DatasetError(`${file}: the labels file needs the header "file,label" (got "${lines[0] ?? ''}").`);
  }
  return lines.slice(1).map((line, i) => {
    const [name, label] = line.split(',').map((s) => s.trim());
    const n = Number(label);
    if (!name || !Number.isInteger(n)) throw new DatasetError(`${file}: line ${i + 2} "${line}" needs a file name and an integer label.`);
    return { file: name, label: n };
  });
}

/** A folder of PNG images plus a labels CSV; every listed image is decoded into memory up front (not timed). */
export async function loadImageFolder(opts: { name: string; root: string; labels: string; limit?: number }): Promise<Dataset> {
  const labelsFile = path.resolve(opts.root, opts.labels);
  let labelText: Buffer;
  labelText = await readDatasetFile(labelsFile, `labels file ${labelsFile} cannot be read. dataset.labels is relative to dataset.root.`);
  let entries = parseLabels(labelText.toString('utf8'), labelsFile);
  if (entries.length === 0) throw new DatasetError(`dataset ${opts.name} is empty: ${labelsFile} lists no images.`);
  if (opts.limit) entries = entries.slice(0, opts.limit);
  const manifest: { name: string; bytes: Uint8Array }[] = [{ name: path.basename(labelsFile), bytes: labelText }];
  const images: Image[] = [];
  for (const e of entries) {
    const file = path.resolve(opts.root, e.file);
    const bytes = await readDatasetFile(file, `${labelsFile} lists ${e.file}, but ${file} cannot be read. Every labelled image must exist.`);
    manifest.push({ name: e.file, bytes });
    images.push(decodePng(bytes, file));
  }
  const classes = Int32Array.from(entries, (e) => e.label);
  return {
    name: opts.name,
    manifestSha256: manifestHash(manifest),
    size: images.length,
    inputNames: ['image'],
    hasLabels: true,
    read(start: number, count: number): RawBatch {
      return { inputs: {}, images: images.slice(start, start + count), labels: sliceLabels({ classes }, start, count), count };
    },
  };
}
