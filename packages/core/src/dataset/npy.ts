import type { DType, Tensor, TypedArray } from '../contracts/tensor.js';

const DESCR: Record<string, DType> = {
  '<f4': 'float32', '<f8': 'float64', '<f2': 'float16', '|i1': 'int8', '|u1': 'uint8',
  '<i4': 'int32', '<i8': 'int64', '|b1': 'bool',
};

function view(dtype: DType, buf: Buffer, offset: number, count: number): TypedArray {
  // Copy into a fresh, aligned buffer: the header length makes the payload offset arbitrary.
  const bytes = buf.subarray(offset);
  const aligned = new Uint8Array(bytes.length);
  aligned.set(bytes);
  const b = aligned.buffer;
  switch (dtype) {
    case 'float32': return new Float32Array(b, 0, count);
    case 'float64': return new Float64Array(b, 0, count);
    case 'float16': return new Uint16Array(b, 0, count);
    case 'int8': return new Int8Array(b, 0, count);
    case 'uint8': case 'bool': return new Uint8Array(b, 0, count);
    case 'int32': return new Int32Array(b, 0, count);
    case 'int64': return new BigInt64Array(b, 0, count);
  }
}

/** Reads a NumPy .npy v1/v2/v3 file (C order, little-endian) into a Tensor. */
export function parseNpy(buf: Buffer, file: string): Tensor {
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') {
    throw new Error(`${file} is not a .npy file (missing the \\x93NUMPY magic). Save arrays with numpy.save().`);
  }
  const major = buf[6]!;
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString(major >= 3 ? 'utf8' : 'latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) throw new Error(`${file}: unreadable .npy header: ${header.trim()}`);
  const dtype = DESCR[descr];
  if (!dtype) {
    throw new Error(`${file}: dtype '${descr}' is not supported; save as one of ${Object.keys(DESCR).join(', ')} (little-endian).`);
  }
  if (fortran === 'True') throw new Error(`${file}: Fortran-order arrays are not supported; save with np.ascontiguousarray().`);
  const dims = shapeText.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const offset = start + headerLen;
  const itemSize = Number(descr.slice(2));
  if (buf.length - offset < count * itemSize) {
    throw new Error(`${file}: truncated: header announces shape [${dims.join(', ')}] but the file holds ${buf.length - offset} data bytes.`);
  }
  return { dtype, dims, data: view(dtype, buf, offset, count) };
}
