import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PNG } from 'pngjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPreprocessor, decodePng, loadDataset } from '../src/dataset/index.js';
import { tempDir, writeNpy } from '../../../test/helpers.js';
import { suiteData } from '../../../test/suite.js';

let dir: string;
beforeAll(async () => {
  dir = await tempDir('pbh-data-');
});

describe('datasets', () => {
  it('reads the same digits from PNG images, .npy and CSV', async () => {
    const images = await loadDataset({ kind: 'image-folder', root: suiteData('digits'), labels: 'labels.csv' }, '/');
    const npy = await loadDataset({ kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy') }, '/');
    const csv = await loadDataset({ kind: 'csv', path: suiteData('digits.csv'), label_column: 'label' }, '/');
    expect(images.size).toBe(npy.size);
    expect(csv.size).toBe(npy.size);
    expect(images.manifestSha256).toMatch(/^[0-9a-f]{64}$/);

    const fromPng = buildPreprocessor([{ scale: 1 / 255 }, { layout: 'NCHW' }], 'input').apply(images.read(0, 4));
    const fromNpy = buildPreprocessor([], 'input').apply(npy.read(0, 4));
    const fromCsv = buildPreprocessor([], 'features').apply(csv.read(0, 4));
    expect(fromPng.dims).toEqual([4, 1, 8, 8]);
    expect(fromNpy.dims).toEqual([4, 1, 8, 8]);
    expect(fromCsv.dims).toEqual([4, 64]);
    // PNGs hold round(pixel*255/16): within half a grey level of the npy values.
    for (let i = 0; i < fromNpy.data.length; i++) {
      expect(Math.abs(Number(fromPng.data[i]) - Number(fromNpy.data[i]))).toBeLessThan(0.5 / 255 + 1e-6);
      expect(Number(fromCsv.data[i])).toBeCloseTo(Number(fromNpy.data[i]), 6);
    }
    expect(Array.from(images.read(0, 4).labels!.classes!)).toEqual(Array.from(npy.read(0, 4).labels!.classes!));
  });

  it('resizes, crops, converts channels and normalises colour images', async () => {
    const png = new PNG({ width: 4, height: 2 });
    for (let i = 0; i < 8; i++) png.data.set([i * 10, 100, 200, 255], i * 4);
    const file = path.join(dir, 'rgb.png');
    await writeFile(file, PNG.sync.write(png));
    const img = decodePng(PNG.sync.write(png), file);
    expect(img).toMatchObject({ width: 4, height: 2, channels: 3 });
    const pre = buildPreprocessor(
      [{ resize: [4, 8] }, { center_crop: [2, 4] }, { normalize: { mean: [0, 100, 200], std: [10, 1, 1] } }, { layout: 'NCHW' }],
      'image',
    );
    const t = pre.apply({ inputs: {}, images: [img], count: 1 });
    expect(t.dims).toEqual([1, 3, 2, 4]);
    const g = Array.from(t.data as Float32Array);
    expect(g.slice(8, 16).every((v) => v === 0)).toBe(true);
    expect(g.slice(16, 24).every((v) => v === 0)).toBe(true);
    expect(pre.describe()).toEqual(['resize 4x8 bilinear', 'center_crop 2x4', 'normalize mean=0,100,200 std=10,1,1', 'layout NCHW']);
    const grey = buildPreprocessor([{ channels: 1 }, { dtype: 'uint8' }], 'image').apply({ inputs: {}, images: [img], count: 1 });
    expect(grey.dims).toEqual([1, 2, 4, 1]);
    expect(grey.data).toBeInstanceOf(Uint8Array);
    expect(grey.data[0]).toBe(Math.round(0.587 * 100 + 0.114 * 200));
  });

  it('names the file and says what to do when data is wrong', async () => {
    const x = path.join(dir, 'x.npy');
    await writeNpy(x, '<f4', [3, 2], [1, 2, 3, 4, 5, 6]);
    const y = path.join(dir, 'y.npy');
    await writeNpy(y, '<i8', [2], [0, 1]);
    await expect(loadDataset({ kind: 'npy', inputs: { input: x }, labels: y }, '/')).rejects.toThrow(/y\.npy: 2 labels for 3 samples/);
    const empty = path.join(dir, 'empty.npy');
    await writeNpy(empty, '<f4', [0, 2], []);
    await expect(loadDataset({ kind: 'npy', inputs: { input: empty } }, '/')).rejects.toThrow(/is empty/);
    const notNpy = path.join(dir, 'bad.npy');
    await writeFile(notNpy, 'hello');
    await expect(loadDataset({ kind: 'npy', inputs: { input: notNpy } }, '/')).rejects.toThrow(/bad\.npy is not a \.npy file/);
    const csv = path.join(dir, 'bad.csv');
    await writeFile(csv, 'a,b,label\n1,2,0\n3,oops,1\n');
    await expect(loadDataset({ kind: 'csv', path: csv, label_column: 'label' }, '/')).rejects.toThrow(/bad\.csv: line 3, column "b": "oops" is not a decimal number/);
    await expect(loadDataset({ kind: 'npy', inputs: { input: path.join(dir, 'nope.npy') } }, '/')).rejects.toThrow(/nope\.npy cannot be read/);
    // An empty cell is not 0, and 0x10 is not 16: each names its line and column.
    const gaps = path.join(dir, 'gaps.csv');
    await writeFile(gaps, 'a,b,label\n1,2,0\n3,,1\n');
    await expect(loadDataset({ kind: 'csv', path: gaps, label_column: 'label' }, '/')).rejects.toThrow(/gaps\.csv: line 3, column "b": the cell is empty/);
    await writeFile(gaps, 'a,b,label\n1,0x10,0\n');
    await expect(loadDataset({ kind: 'csv', path: gaps, label_column: 'label' }, '/')).rejects.toThrow(/line 2, column "b": "0x10" is not a decimal number/);
    await writeFile(gaps, 'a,b,label\n1,2,\n');
    await expect(loadDataset({ kind: 'csv', path: gaps, label_column: 'label' }, '/')).rejects.toThrow(/line 2: the label is empty/);
    await writeFile(gaps, 'a,b,label\n-1.5e3,.25,2\n');
    const parsed = await loadDataset({ kind: 'csv', path: gaps, label_column: 'label' }, '/');
    expect(Array.from(parsed.read(0, 1).inputs.features!.data as Float32Array)).toEqual([-1500, 0.25]);
    // Devices and FIFOs are refused before a byte is read: /dev/zero would be read without end, a FIFO would block.
    await expect(loadDataset({ kind: 'npy', inputs: { input: '/dev/zero' } }, '/')).rejects.toThrow(/\/dev\/zero is a device, not a regular file/);
    const fifo = path.join(dir, 'pipe.csv');
    execFileSync('mkfifo', [fifo]);
    await expect(loadDataset({ kind: 'csv', path: fifo }, '/')).rejects.toThrow(/pipe\.csv is a FIFO \(named pipe\), not a regular file/);
    await expect(loadDataset({ kind: 'npy', inputs: { input: dir } }, '/')).rejects.toThrow(/is a directory, not a regular file/);
    const layoutOnTensor = buildPreprocessor([{ layout: 'NCHW' }], 'input');
    const ds = await loadDataset({ kind: 'npy', inputs: { input: x } }, '/');
    expect(() => layoutOnTensor.apply(ds.read(0, 1))).toThrow(/image-folder datasets only/);
  });
});
