import type { Image, Preprocessor, RawBatch } from '../contracts/dataset.js';
import type { DType, Tensor, TypedArray } from '../contracts/tensor.js';
import type { PreprocessStep } from '../config/schema.js';
import { DatasetError } from './errors.js';

function resizeBilinear(img: Image, h: number, w: number): Image {
  if (img.height === h && img.width === w) return img;
  const out = new Float32Array(h * w * img.channels);
  const sy = img.height / h;
  const sx = img.width / w;
  for (let y = 0; y < h; y++) {
    // Half-pixel centres, as PIL/OpenCV do.
    const fy = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), img.height - 1);
    const y0 = Math.floor(fy);
    const y1 = Math.min(y0 + 1, img.height - 1);
    const dy = fy - y0;
    for (let x = 0; x < w; x++) {
      const fx = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), img.width - 1);
      const x0 = Math.floor(fx);
      const x1 = Math.min(x0 + 1, img.width - 1);
      const dx = fx - x0;
      for (let c = 0; c < img.channels; c++) {
        const at = (yy: number, xx: number): number => img.data[(yy * img.width + xx) * img.channels + c]!;
        const top = at(y0, x0) * (1 - dx) + at(y0, x1) * dx;
        const bottom = at(y1, x0) * (1 - dx) + at(y1, x1) * dx;
        out[(y * w + x) * img.channels + c] = top * (1 - dy) + bottom * dy;
      }
    }
  }
  return { data: out, height: h, width: w, channels: img.channels };
}

function centerCrop(img: Image, h: number, w: number): Image {
  if (h > img.height || w > img.width) {
    throw new DatasetError(`center_crop ${h}x${w} is larger than the image (${img.height}x${img.width}); resize first.`);
  }
  const top = Math.floor((img.height - h) / 2);
  const left = Math.floor((img.width - w) / 2);
  const out = new Float32Array(h * w * img.channels);
  for (let y = 0; y < h; y++) {
    const src = ((top + y) * img.width + left) * img.channels;
    out.set(img.data.subarray(src, src + w * img.channels), y * w * img.channels);
  }
  return { data: out, height: h, width: w, channels: img.channels };
}

function setChannels(img: Image, channels: number): Image {
  if (img.channels === channels) return img;
  const px = img.height * img.width;
  const out = new Float32Array(px * channels);
  for (let i = 0; i < px; i++) {
    if (channels === 3) {
      out.fill(img.data[i]!, i * 3, i * 3 + 3);
    } else {
      out[i] = 0.299 * img.data[i * 3]! + 0.587 * img.data[i * 3 + 1]! + 0.114 * img.data[i * 3 + 2]!;
    }
  }
  return { data: out, height: img.height, width: img.width, channels };
}

function castTo(dtype: DType, src: Float32Array): TypedArray {
  switch (dtype) {
    case 'float32': return src;
    case 'float64': return Float64Array.from(src);
    case 'uint8': return Uint8Array.from(src, (v) => Math.min(255, Math.max(0, Math.round(v))));
    case 'int8': return Int8Array.from(src, (v) => Math.min(127, Math.max(-128, Math.round(v))));
    case 'int32': return Int32Array.from(src, (v) => Math.round(v));
    case 'int64': return BigInt64Array.from(src, (v) => BigInt(Math.round(v)));
    default:
      throw new DatasetError(`preprocess dtype ${dtype} is not supported by PBH's preprocessor yet; use float32, float64, uint8, int8, int32 or int64.`);
  }
}

type Compiled = {
  perImage: ((img: Image) => Image)[];
  scale: number;
  mean?: number[];
  std?: number[];
  layout: 'NCHW' | 'NHWC';
  dtype: DType;
  described: string[];
};

function compile(steps: PreprocessStep[]): Compiled {
  const c: Compiled = { perImage: [], scale: 1, layout: 'NHWC', dtype: 'float32', described: [] };
  for (const step of steps) {
    if ('resize' in step) {
      const [h, w] = step.resize;
      c.perImage.push((img) => resizeBilinear(img, h, w));
      c.described.push(`resize ${h}x${w} bilinear`);
    } else if ('center_crop' in step) {
      const [h, w] = typeof step.center_crop === 'number' ? [step.center_crop, step.center_crop] : step.center_crop;
      c.perImage.push((img) => centerCrop(img, h, w));
      c.described.push(`center_crop ${h}x${w}`);
    } else if ('channels' in step) {
      const n = step.channels;
      c.perImage.push((img) => setChannels(img, n));
      c.described.push(`channels ${n}`);
    } else if ('scale' in step) {
      c.scale *= step.scale;
      c.described.push(`scale ${step.scale}`);
    } else if ('normalize' in step) {
      if (step.normalize.mean.length !== step.normalize.std.length) {
        throw new DatasetError(`preprocess normalize: mean has ${step.normalize.mean.length} values but std has ${step.normalize.std.length}; give one per channel.`);
      }
      c.mean = step.normalize.mean;
      c.std = step.normalize.std;
      c.described.push(`normalize mean=${c.mean.join(',')} std=${c.std.join(',')}`);
    } else if ('layout' in step) {
      c.layout = step.layout;
      c.described.push(`layout ${step.layout}`);
    } else {
      c.dtype = step.dtype;
      c.described.push(`dtype ${step.dtype}`);
    }
  }
  return c;
}

function stackImages(c: Compiled, images: Image[]): Tensor {
  const done = images.map((img) => c.perImage.reduce((acc, f) => f(acc), img));
  const first = done[0];
  if (!first) return { dtype: c.dtype, dims: [0], data: new Float32Array(0) };
  const { height: h, width: w, channels: ch } = first;
  const mismatch = done.find((d) => d.height !== h || d.width !== w || d.channels !== ch);
  if (mismatch) {
    throw new DatasetError(`images differ in size (${h}x${w}x${ch} vs ${mismatch.height}x${mismatch.width}x${mismatch.channels}); add a resize (and center_crop) preprocess step.`);
  }
  if (c.mean && c.mean.length !== 1 && c.mean.length !== ch) {
    throw new DatasetError(`preprocess normalize has ${c.mean.length} means but the images have ${ch} channels; give 1 or ${ch}.`);
  }
  const per = h * w * ch;
  const out = new Float32Array(done.length * per);
  done.forEach((img, n) => {
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        for (let k = 0; k < ch; k++) {
          let v = img.data[(y * w + x) * ch + k]! * c.scale;
          if (c.mean) v = (v - c.mean[c.mean.length === 1 ? 0 : k]!) / c.std![c.std!.length === 1 ? 0 : k]!;
          const o = c.layout === 'NCHW' ? k * h * w + y * w + x : (y * w + x) * ch + k;
          out[n * per + o] = v;
        }
      }
    }
  });
  const dims = c.layout === 'NCHW' ? [done.length, ch, h, w] : [done.length, h, w, ch];
  return { dtype: c.dtype, dims, data: castTo(c.dtype, out) };
}

function transformTensor(c: Compiled, t: Tensor, steps: PreprocessStep[]): Tensor {
  if (c.perImage.length > 0 || steps.some((s) => 'layout' in s)) {
    throw new DatasetError('resize, center_crop, channels and layout apply to image-folder datasets only; store .npy/.csv samples in the layout the model takes.');
  }
  const identity = c.scale === 1 && !c.mean && (steps.every((s) => !('dtype' in s)) || c.dtype === t.dtype);
  if (identity) return t;
  if (t.dtype === 'int64' || t.dtype === 'float16' || t.dtype === 'bool') {
    throw new DatasetError(`cannot scale/normalize/cast a ${t.dtype} dataset tensor; store it as float32.`);
  }
  const src = Float32Array.from(t.data as ArrayLike<number>);
  // Per-channel normalisation of tensors assumes channels on axis 1 (NCHW), the layout ONNX vision models use.
  const ch = t.dims[1] ?? 1;
  const inner = t.dims.slice(2).reduce((a, b) => a * b, 1);
  for (let i = 0; i < src.length; i++) {
    let v = src[i]! * c.scale;
    if (c.mean) {
      const k = c.mean.length === 1 ? 0 : Math.floor(i / inner) % ch;
      v = (v - c.mean[k]!) / c.std![k]!;
    }
    src[i] = v;
  }
  const dtype = steps.some((s) => 'dtype' in s) ? c.dtype : 'float32';
  return { dtype, dims: t.dims, data: castTo(dtype, src) };
}

/** Builds the preprocessor for one model input: images get the full pipeline, tensors scale/normalize/dtype only. */
export function buildPreprocessor(steps: PreprocessStep[], inputName: string): Preprocessor {
  const c = compile(steps);
  return {
    describe: () => c.described,
    apply(batch: RawBatch): Tensor {
      if (batch.images) return stackImages(c, batch.images);
      const t = batch.inputs[inputName] ?? Object.values(batch.inputs)[0];
      if (!t) throw new DatasetError(`the dataset has no input "${inputName}"; its inputs are ${Object.keys(batch.inputs).join(', ')}.`);
      return transformTensor(c, t, steps);
    },
  };
}
