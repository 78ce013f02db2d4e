/** Reading values out of decoded ONNX nodes and tensors: attributes, small numeric tensors, aligned views. */
import type { OnnxNode, OnnxTensor } from './onnx-reader.js';

export function attrInt(node: OnnxNode, name: string, fallback: number): number;
export function attrInt(node: OnnxNode, name: string, fallback: null): number | null;
export function attrInt(node: OnnxNode, name: string, fallback: number | null): number | null {
  const a = node.attributes[name];
  return a?.type === 'int' ? a.value : fallback;
}

export function attrInts(node: OnnxNode, name: string): number[] | null {
  const a = node.attributes[name];
  return a?.type === 'ints' ? a.value : null;
}

export function attrFloats(node: OnnxNode, name: string): number[] | null {
  const a = node.attributes[name];
  return a?.type === 'floats' ? a.value : null;
}

export function attrString(node: OnnxNode, name: string, fallback: string): string {
  const a = node.attributes[name];
  return a?.type === 'string' ? a.value : fallback;
}

export function attrTensor(node: OnnxNode, name: string): OnnxTensor | null {
  const a = node.attributes[name];
  return a?.type === 'tensor' ? a.value : null;
}

export function tensorElementCount(t: { dims: readonly number[] }): number {
  let n = 1;
  for (const d of t.dims) n *= d;
  return n;
}

/** raw_data element readers (little-endian) by TensorProto.DataType, for the types read as plain numbers. */
const RAW_READERS: Readonly<Record<number, readonly [number, (dv: DataView, offset: number) => number]>> = {
  1: [4, (dv, o) => dv.getFloat32(o, true)],
  2: [1, (dv, o) => dv.getUint8(o)],
  3: [1, (dv, o) => dv.getInt8(o)],
  4: [2, (dv, o) => dv.getUint16(o, true)],
  5: [2, (dv, o) => dv.getInt16(o, true)],
  6: [4, (dv, o) => dv.getInt32(o, true)],
  7: [8, (dv, o) => Number(dv.getBigInt64(o, true))],
  9: [1, (dv, o) => dv.getUint8(o)],
  11: [8, (dv, o) => dv.getFloat64(o, true)],
  12: [4, (dv, o) => dv.getUint32(o, true)],
  13: [8, (dv, o) => Number(dv.getBigUint64(o, true))],
};

const FLOAT16 = 10;
const BFLOAT16 = 16;

/**
 * The elements of a small numeric tensor as JS numbers (shapes, axes, indices, scalars), or null when it is
 * external, a string tensor, or a type read only as bits (float16, bfloat16, 4-bit, float8). Not meant for weights.
 */
export function tensorToNumbers(t: OnnxTensor): number[] | null {
  if (t.external) return null;
  const count = tensorElementCount(t);
  if (t.rawData) {
    const reader = RAW_READERS[t.dataType];
    if (!reader || t.rawData.byteLength < count * reader[0]) return null;
    const [width, read] = reader;
    const dv = new DataView(t.rawData.buffer, t.rawData.byteOffset, t.rawData.byteLength);
    return Array.from({ length: count }, (_, i) => read(dv, i * width));
  }
  if (t.floatData) return Array.from(t.floatData);
  if (t.int64Data) return t.int64Data.slice();
  if (t.doubleData) return Array.from(t.doubleData);
  if (t.uint64Data) return t.uint64Data.slice();
  if (t.int32Data) return t.dataType === FLOAT16 || t.dataType === BFLOAT16 ? null : Array.from(t.int32Data);
  return count === 0 ? [] : null;
}

/** Little-endian float32 payload as a Float32Array: a view when 4-aligned, else one copy. */
export function float32View(bytes: Uint8Array): Float32Array {
  const count = Math.floor(bytes.byteLength / 4);
  const r = alignedBytes(bytes, 4);
  return new Float32Array(r.buffer, r.byteOffset, count);
}

/**
 * The bytes themselves when their offset is a multiple of `width`, else an aligned copy.
 * (Buffer#slice does not copy, hence the explicit copy.)
 */
export function alignedBytes(bytes: Uint8Array, width: number): Uint8Array {
  if (bytes.byteOffset % width === 0) return bytes;
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}
