/** A little-endian, C-order .npy (format 1.0) of float32 values: how calibration samples reach the Python side. */
export function npyBytes(descr: '<f4', shape: readonly number[], values: Float32Array): Buffer {
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  // magic (6) + version (2) + header length (2) + header + '\n' is padded to a multiple of 64 bytes.
  const unpadded = 10 + header.length + 1;
  header = `${header.padEnd(header.length + ((64 - (unpadded % 64)) % 64), ' ')}\n`;
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), body]);
}
