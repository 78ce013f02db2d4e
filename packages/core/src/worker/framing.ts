import { endianness } from 'node:os';
import { DTYPES, elementCount, itemSize, typedView, type Tensor } from '../contracts/tensor.js';
import { frameHeaderSchema, type FrameHeader, type TensorHeader } from './protocol.js';

/** A tensor as it travels on the wire: named, in header order. */
export interface NamedTensor extends Tensor {
  name: string;
}

export interface Frame {
  header: FrameHeader;
  tensors: NamedTensor[];
}

if (endianness() !== 'LE') {
  // The wire format is little-endian and tensors are sent as views of their memory.
  throw new Error(`PBH native workers need a little-endian host; this one is ${endianness()}`);
}

/** A header is small JSON; a line this long means the stream is not ours. */
export const MAX_HEADER_BYTES = 64 << 20;
const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;

function checkTensor(t: NamedTensor): void {
  const expected = DTYPES[t.dtype].array;
  if (!(t.data instanceof expected)) {
    throw new TypeError(`tensor "${t.name}": dtype ${t.dtype} must be carried in a ${expected.name}, got ${t.data.constructor.name}`);
  }
  const n = elementCount(t.dims);
  if (t.dims.some((d) => !Number.isInteger(d) || d < 0) || n !== t.data.length) {
    throw new TypeError(`tensor "${t.name}": dims [${t.dims.join(', ')}] hold ${n} elements, data has ${t.data.length}`);
  }
}

/**
 * A request frame as the chunks to write: the header line, then one view per tensor onto its own memory
 * (no copy). `tensors` is added to the header only when there are some. With `bytesFile` (tensor-file.ts) the
 * bytes lie in that file and the frame is the header line alone.
 */
export function encodeFrame(head: Record<string, unknown>, tensors: readonly NamedTensor[], bytesFile?: string): Buffer[] {
  if (tensors.length === 0) return [Buffer.from(`${JSON.stringify(head)}\n`, 'utf8')];
  const specs: TensorHeader[] = [];
  const chunks: Buffer[] = [];
  for (const t of tensors) {
    checkTensor(t);
    specs.push({ name: t.name, dtype: t.dtype, shape: t.dims, nbytes: t.data.byteLength });
    if (t.data.byteLength > 0 && bytesFile === undefined) chunks.push(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  }
  const line = Buffer.from(`${JSON.stringify({ ...head, tensors: specs, ...(bytesFile === undefined ? {} : { bytes_file: bytesFile }) })}\n`, 'utf8');
  return [line, ...chunks];
}

/** The stream is not a sequence of frames. `bytesSeen` is a printable excerpt of what arrived. */
export class FrameError extends Error {
  constructor(
    message: string,
    readonly bytesSeen: string,
  ) {
    super(message);
    this.name = 'FrameError';
  }
}

function printable(bytes: Uint8Array, limit = 200): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, limit)).toString('latin1');
  const escaped = JSON.stringify(text);
  return bytes.byteLength > limit ? `${escaped}... (${bytes.byteLength} bytes)` : escaped;
}

interface BodyState {
  header: FrameHeader;
  tensors: NamedTensor[];
  index: number;
  target: Uint8Array;
  filled: number;
}

/**
 * Incremental decoder of a worker's frame stream. Feed it chunks as they arrive; it returns the frames they
 * complete. Each byte of tensor data is copied once, from the chunk into the tensor's own ArrayBuffer.
 */
export class FrameDecoder {
  private headerParts: Buffer[] = [];
  private headerBytes = 0;
  private body: BodyState | undefined;

  /** True when no frame is partly received. */
  get idle(): boolean {
    return this.body === undefined && this.headerBytes === 0;
  }

  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    let offset = 0;
    while (offset < chunk.length) {
      if (this.body) {
        offset = this.fillBody(chunk, offset, frames);
        continue;
      }
      if (this.headerBytes === 0 && chunk[offset] !== OPEN_BRACE) {
        throw new FrameError(
          `expected a JSON header line starting with "{", got ${printable(chunk.subarray(offset))}`,
          printable(chunk.subarray(offset)),
        );
      }
      const newline = chunk.indexOf(NEWLINE, offset);
      if (newline === -1) {
        this.headerParts.push(chunk.subarray(offset));
        this.headerBytes += chunk.length - offset;
        if (this.headerBytes > MAX_HEADER_BYTES) {
          const seen = printable(Buffer.concat(this.headerParts.slice(0, 1)));
          throw new FrameError(`header line longer than ${MAX_HEADER_BYTES} bytes without a newline: ${seen}`, seen);
        }
        break;
      }
      this.headerParts.push(chunk.subarray(offset, newline));
      const line = this.headerParts.length === 1 ? this.headerParts[0]! : Buffer.concat(this.headerParts);
      this.headerParts = [];
      this.headerBytes = 0;
      offset = newline + 1;
      this.startBody(line, frames);
    }
    return frames;
  }

  /** Call when the stream ended; throws when it ended inside a frame. */
  end(): void {
    if (this.body) {
      const { header, index, filled, target } = this.body;
      const name = header.tensors[index]?.name ?? '?';
      throw new FrameError(`stream ended after ${filled} of ${target.byteLength} bytes of tensor "${name}"`, '');
    }
    if (this.headerBytes > 0) {
      const seen = printable(Buffer.concat(this.headerParts));
      throw new FrameError(`stream ended inside a header line: ${seen}`, seen);
    }
  }

  private startBody(line: Buffer, frames: Frame[]): void {
    let json: unknown;
    try {
      json = JSON.parse(line.toString('utf8'));
    } catch (error) {
      throw new FrameError(`header line is not JSON (${(error as Error).message}): ${printable(line)}`, printable(line));
    }
    const parsed = frameHeaderSchema.safeParse(json);
    if (!parsed.success) {
      throw new FrameError(`header line is not a reply header (${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}): ${printable(line)}`, printable(line));
    }
    const header = parsed.data;
    for (const t of header.tensors) {
      const expected = elementCount(t.shape) * itemSize(t.dtype);
      if (expected !== t.nbytes) {
        throw new FrameError(`tensor "${t.name}": shape [${t.shape.join(', ')}] of ${t.dtype} is ${expected} bytes, header says ${t.nbytes}`, printable(line));
      }
    }
    this.body = { header, tensors: [], index: -1, target: new Uint8Array(0), filled: 0 };
    this.nextTensor(frames);
  }

  /** Moves to the next tensor that has bytes to receive, completing empty tensors and the frame on the way. */
  private nextTensor(frames: Frame[]): void {
    const body = this.body!;
    for (;;) {
      if (body.index >= 0) {
        const spec = body.header.tensors[body.index]!;
        const n = elementCount(spec.shape);
        body.tensors.push({ name: spec.name, dtype: spec.dtype, dims: spec.shape, data: typedView(spec.dtype, body.target.buffer, 0, n) });
      }
      body.index += 1;
      const spec = body.header.tensors[body.index];
      if (!spec) {
        frames.push({ header: body.header, tensors: body.tensors });
        this.body = undefined;
        return;
      }
      // allocUnsafeSlow: an unpooled, unzeroed buffer of exactly this size, aligned for any typed array.
      body.target = spec.nbytes === 0 ? new Uint8Array(0) : new Uint8Array(Buffer.allocUnsafeSlow(spec.nbytes).buffer);
      body.filled = 0;
      if (spec.nbytes > 0) return;
    }
  }

  private fillBody(chunk: Buffer, offset: number, frames: Frame[]): number {
    const body = this.body!;
    const take = Math.min(body.target.byteLength - body.filled, chunk.length - offset);
    body.target.set(chunk.subarray(offset, offset + take), body.filled);
    body.filled += take;
    if (body.filled === body.target.byteLength) this.nextTensor(frames);
    return offset + take;
  }
}
