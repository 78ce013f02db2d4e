import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder, FrameError, type Frame, type NamedTensor } from '../../src/worker/framing.js';
import { tensorsOfEveryDtype } from './helpers.js';

/** A reply frame as a worker would write it (encodeFrame builds request frames; the layout is the same). */
function replyBytes(id: number, tensors: NamedTensor[], extra: Record<string, unknown> = {}): Buffer {
  return Buffer.concat(encodeFrame({ id, ok: true, ...extra }, tensors));
}

function decodeInChunks(bytes: Buffer, chunkSizes: (i: number) => number): Frame[] {
  const decoder = new FrameDecoder();
  const frames: Frame[] = [];
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = Math.max(1, chunkSizes(i));
    frames.push(...decoder.push(bytes.subarray(offset, offset + size)));
    offset += size;
  }
  decoder.end();
  expect(decoder.idle).toBe(true);
  return frames;
}

function expectSameTensors(actual: NamedTensor[], expected: NamedTensor[]): void {
  expect(actual.map((t) => [t.name, t.dtype, t.dims])).toEqual(expected.map((t) => [t.name, t.dtype, t.dims]));
  actual.forEach((t, i) => {
    expect(t.data.constructor).toBe(expected[i]!.data.constructor);
    expect(Array.from(t.data as ArrayLike<number | bigint>)).toEqual(Array.from(expected[i]!.data as ArrayLike<number | bigint>));
  });
}

describe('frame encoding and decoding', () => {
  it('round-trips every dtype in its typed array', () => {
    const tensors = tensorsOfEveryDtype();
    const [frame] = decodeInChunks(replyBytes(1, tensors), () => 1 << 20);
    expect(frame!.header).toMatchObject({ id: 1, ok: true });
    expectSameTensors(frame!.tensors, tensors);
    expect(frame!.tensors.find((t) => t.dtype === 'int64')!.data).toBeInstanceOf(BigInt64Array);
  });

  it('decodes frames split at every byte, and several frames in one chunk', () => {
    const tensors = tensorsOfEveryDtype();
    const stream = Buffer.concat([replyBytes(1, tensors), replyBytes(2, []), replyBytes(3, tensors.slice(0, 3))]);
    const byteByByte = decodeInChunks(stream, () => 1);
    const oneChunk = decodeInChunks(stream, () => stream.length);
    let seed = 7;
    const random = decodeInChunks(stream, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 97);
    for (const frames of [byteByByte, oneChunk, random]) {
      expect(frames.map((f) => f.header.id)).toEqual([1, 2, 3]);
      expectSameTensors(frames[0]!.tensors, tensors);
      expect(frames[1]!.tensors).toEqual([]);
      expectSameTensors(frames[2]!.tensors, tensors.slice(0, 3));
    }
  });

  it('handles zero-size tensors and scalars', () => {
    const empty: NamedTensor = { name: 'input', dtype: 'float32', dims: [0, 1, 8, 8], data: new Float32Array(0) };
    const scalar: NamedTensor = { name: 's', dtype: 'int64', dims: [], data: new BigInt64Array([42n]) };
    const after: NamedTensor = { name: 'b', dtype: 'bool', dims: [0], data: new Uint8Array(0) };
    const frames = decodeInChunks(Buffer.concat([replyBytes(1, [empty, scalar, after]), replyBytes(2, [empty])]), () => 3);
    expect(frames).toHaveLength(2);
    expectSameTensors(frames[0]!.tensors, [empty, scalar, after]);
    expect(frames[1]!.tensors[0]!.dims).toEqual([0, 1, 8, 8]);
  });

  it('decodes a 128 MB tensor from 64 KB chunks in linear time, copying each byte once', () => {
    const n = 32 * 1024 * 1024;
    const data = new Float32Array(n);
    for (let i = 0; i < n; i += 4096) data[i] = i;
    const stream = replyBytes(9, [{ name: 'big', dtype: 'float32', dims: [n], data }]);
    const decoder = new FrameDecoder();
    const started = performance.now();
    const frames: Frame[] = [];
    for (let offset = 0; offset < stream.length; offset += 65536) frames.push(...decoder.push(stream.subarray(offset, offset + 65536)));
    const elapsed = performance.now() - started;
    const out = frames[0]!.tensors[0]!.data as Float32Array;
    expect(out.length).toBe(n);
    expect(out.byteOffset).toBe(0);
    expect(out[4096 * 1000]).toBe(4096 * 1000);
    expect(out[n - 4096]).toBe(n - 4096);
    // A quadratic decoder (concatenating chunks) needs minutes here; one copy takes well under a second.
    expect(elapsed).toBeLessThan(3000);
  });

  it('sends tensors as views of their own memory, honouring byteOffset', () => {
    const backing = new Float32Array([9, 1, 2, 3, 9]);
    const view = new Float32Array(backing.buffer, 4, 3);
    const chunks = encodeFrame({ id: 1, cmd: 'infer' }, [{ name: 'x', dtype: 'float32', dims: [3], data: view }]);
    expect(chunks).toHaveLength(2);
    expect(chunks[1]!.buffer).toBe(backing.buffer);
    expect(JSON.parse(chunks[0]!.toString())).toEqual({ id: 1, cmd: 'infer', tensors: [{ name: 'x', dtype: 'float32', shape: [3], nbytes: 12 }] });
  });

  it('writes a header-only request as the bare header, the spelling the worker\'s run fast path matches', () => {
    const chunks = encodeFrame({ id: 12, cmd: 'run', index: 3 }, []);
    expect(chunks.map((c) => c.toString())).toEqual(['{"id":12,"cmd":"run","index":3}\n']);
  });

  it("reads the worker's run reply on its fast path as the general path reads it, and any other spelling on the general path", () => {
    // As the worker writes it, and as workers before protocol 5 wrote it (with their peak RSS).
    for (const line of ['{"id":42,"ok":true,"engine_ns":123456789012}\n', '{"id":42,"ok":true,"engine_ns":123456789012,"rss_peak_bytes":987654321}\n']) {
      const [fast] = decodeInChunks(Buffer.from(line), (i) => (i === 0 ? 7 : 100));
      expect(fast!.header).toEqual({ ...JSON.parse(line), tensors: [] });
      expect(fast!.tensors).toEqual([]);
    }
    // Another field order, an extra field, an error reply and non-digits are not the fast path's and still decode.
    const others = [
      '{"ok":true,"id":42,"engine_ns":5,"rss_peak_bytes":9}',
      '{"id":42,"ok":true,"engine_ns":5,"rss_peak_bytes":9,"note":"x"}',
      '{"id":42,"ok":false,"kind":"bad_request","error":"no","fatal":false}',
    ];
    const frames = decodeInChunks(Buffer.from(others.map((o) => `${o}\n`).join('')), () => 1 << 16);
    expect(frames.map((f) => f.header)).toEqual(others.map((o) => ({ ...JSON.parse(o), tensors: [] })));
    expect(() => new FrameDecoder().push(Buffer.from('{"id":4x,"ok":true,"engine_ns":5,"rss_peak_bytes":9}\n'))).toThrow(FrameError);
  });

  it('refuses a tensor whose typed array or element count does not match', () => {
    expect(() => encodeFrame({}, [{ name: 'x', dtype: 'int64', dims: [2], data: new Int32Array(2) }])).toThrow(/int64 must be carried in a BigInt64Array, got Int32Array/);
    expect(() => encodeFrame({}, [{ name: 'x', dtype: 'float32', dims: [2, 3], data: new Float32Array(5) }])).toThrow(/\[2, 3\] hold 6 elements, data has 5/);
    expect(() => encodeFrame({}, [{ name: 'b', dtype: 'uint8', dims: [2], data: Buffer.from([1, 2]) }])).not.toThrow();
  });
});

describe('garbage on the frame stream', () => {
  function decodeError(...chunks: string[]): FrameError {
    const decoder = new FrameDecoder();
    try {
      for (const chunk of chunks) decoder.push(Buffer.from(chunk, 'latin1'));
      decoder.end();
    } catch (error) {
      expect(error).toBeInstanceOf(FrameError);
      return error as FrameError;
    }
    throw new Error('expected a FrameError');
  }

  it('names the bytes of a line that does not start a header', () => {
    const error = decodeError('loading weights... 42%\n');
    expect(error.message).toContain('expected a JSON header line');
    expect(error.bytesSeen).toContain('loading weights... 42%');
  });

  it('rejects garbage that starts with "{", JSON that is not a reply header, and bad sizes', () => {
    expect(decodeError('{not json}\n').message).toMatch(/not JSON.*\{not json\}/);
    expect(decodeError('{"hello": 1}\n').message).toMatch(/not a reply header.*id/);
    expect(decodeError('{"id":1,"ok":true,"tensors":[{"name":"x","dtype":"float32","shape":[2],"nbytes":7}]}\n').message).toMatch(
      /is 8 bytes, header says 7/,
    );
    expect(decodeError('{"id":1,"ok":true,"tensors":[{"name":"x","dtype":"complex64","shape":[1],"nbytes":8}]}\n').message).toMatch(/dtype/);
  });

  it('notices garbage after a valid frame and a stream that ends inside a frame', () => {
    expect(decodeError('{"id":1,"ok":true}\n', '\u0000\u00ffnoise').bytesSeen).toContain('noise');
    expect(decodeError('{"id":1,"ok":true,"tensors":[{"name":"x","dtype":"uint8","shape":[4],"nbytes":4}]}\nab').message).toMatch(
      /after 2 of 4 bytes of tensor "x"/,
    );
    expect(decodeError('{"id":1,"ok"').message).toMatch(/ended inside a header line/);
  });
});
