/**
 * A minimal protobuf wire-format reader, enough to walk ONNX messages without a protobuf dependency.
 * It never copies payload bytes: length-delimited fields come back as subarrays of the input.
 */

export const WireType = {
  Varint: 0,
  Fixed64: 1,
  LengthDelimited: 2,
  StartGroup: 3,
  EndGroup: 4,
  Fixed32: 5,
} as const;

const TWO_POW_32 = 4294967296;

/** Raised for bytes that are not a well-formed protobuf message; `offset` is absolute in the top-level buffer. */
export class WireFormatError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'WireFormatError';
  }
}

export interface FieldHeader {
  field: number;
  wireType: number;
  /** Absolute offset of the tag, for error messages. */
  at: number;
}

export class ProtoReader {
  pos: number;
  private readonly view: DataView;

  /**
   * @param bytes the whole buffer (kept so nested readers share it and offsets stay absolute)
   * @param start first byte of this message
   * @param end one past the last byte of this message
   */
  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    readonly end = bytes.length,
    view?: DataView,
  ) {
    this.pos = start;
    this.view = view ?? new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  done(): boolean {
    return this.pos >= this.end;
  }

  readHeader(): FieldHeader {
    const at = this.pos;
    const tag = this.readVarint();
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (field === 0) throw new WireFormatError(`field number 0 at byte ${at}`, at);
    if (wireType > 5) throw new WireFormatError(`invalid wire type ${wireType} at byte ${at}`, at);
    return { field, wireType, at };
  }

  /** Unsigned varint as a JS number; exact up to 2^53, which covers every size and count in a model. */
  readVarint(): number {
    const { lo, hi } = this.readVarint64();
    return hi * TWO_POW_32 + lo;
  }

  /** Signed int64 varint (two's complement, as protobuf writes negative int64/int32). Exact for |v| < 2^53. */
  readInt64(): number {
    const { lo, hi } = this.readVarint64();
    return (hi | 0) * TWO_POW_32 + lo;
  }

  private readVarint64(): { lo: number; hi: number } {
    const bytes = this.bytes;
    let lo = 0;
    let hi = 0;
    let shift = 0;
    const start = this.pos;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) {
        throw new WireFormatError(`truncated varint at byte ${start}`, start);
      }
      const b = bytes[this.pos++]!;
      if (shift < 28) {
        lo |= (b & 0x7f) << shift;
      } else if (shift === 28) {
        lo |= (b & 0x0f) << 28;
        hi |= (b & 0x7f) >> 4;
      } else {
        hi |= (b & 0x7f) << (shift - 32);
      }
      if ((b & 0x80) === 0) return { lo: lo >>> 0, hi: hi >>> 0 };
      shift += 7;
    }
    throw new WireFormatError(`varint longer than 10 bytes at byte ${start}`, start);
  }

  readFixed32Float(): number {
    this.need(4);
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  readFixed64Double(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** A length-delimited payload as a view into the buffer. */
  readBytes(): Uint8Array {
    const at = this.pos;
    const len = this.readVarint();
    if (len > this.end - this.pos) {
      throw new WireFormatError(
        `length-delimited field at byte ${at} claims ${len} bytes but only ${this.end - this.pos} remain (truncated file?)`,
        at,
      );
    }
    const view = this.bytes.subarray(this.pos, this.pos + len);
    this.pos += len;
    return view;
  }

  readString(): string {
    return textDecoder.decode(this.readBytes());
  }

  /** A reader over a nested message, sharing the buffer so offsets stay absolute. */
  readMessage(): ProtoReader {
    const at = this.pos;
    const len = this.readVarint();
    if (len > this.end - this.pos) {
      throw new WireFormatError(
        `embedded message at byte ${at} claims ${len} bytes but only ${this.end - this.pos} remain (truncated file?)`,
        at,
      );
    }
    const sub = new ProtoReader(this.bytes, this.pos, this.pos + len, this.view);
    this.pos += len;
    return sub;
  }

  skip(wireType: number, at: number): void {
    switch (wireType) {
      case WireType.Varint:
        this.readVarint();
        return;
      case WireType.Fixed64:
        this.need(8);
        this.pos += 8;
        return;
      case WireType.LengthDelimited:
        this.readBytes();
        return;
      case WireType.Fixed32:
        this.need(4);
        this.pos += 4;
        return;
      default:
        // Groups are deprecated and never used by ONNX; meeting one means these bytes are something else.
        throw new WireFormatError(`unexpected group wire type ${wireType} at byte ${at}`, at);
    }
  }

  private need(n: number): void {
    if (this.end - this.pos < n) {
      throw new WireFormatError(`truncated fixed-width field at byte ${this.pos}`, this.pos);
    }
  }
}

const textDecoder = new TextDecoder('utf-8');

/** Throws unless a known field arrived with the wire type its declaration implies. */
export function expectWireType(h: FieldHeader, expected: number, what: string): void {
  if (h.wireType !== expected) {
    throw new WireFormatError(
      `${what} (field ${h.field}) at byte ${h.at} has wire type ${h.wireType}, expected ${expected}`,
      h.at,
    );
  }
}

/**
 * Reads a repeated varint field that may arrive packed (one length-delimited run) or unpacked (one value per tag);
 * proto2 writers such as onnx's use the unpacked form for `repeated int64 dims`.
 */
export function readRepeatedInt64(r: ProtoReader, h: FieldHeader, into: number[], what: string): void {
  if (h.wireType === WireType.Varint) {
    into.push(r.readInt64());
  } else if (h.wireType === WireType.LengthDelimited) {
    const sub = r.readMessage();
    while (!sub.done()) into.push(sub.readInt64());
  } else {
    expectWireType(h, WireType.Varint, what);
  }
}

/** Reads a repeated float field, packed or not. */
export function readRepeatedFloat(r: ProtoReader, h: FieldHeader, into: number[], what: string): void {
  if (h.wireType === WireType.Fixed32) {
    into.push(r.readFixed32Float());
  } else if (h.wireType === WireType.LengthDelimited) {
    const sub = r.readMessage();
    while (!sub.done()) into.push(sub.readFixed32Float());
  } else {
    expectWireType(h, WireType.Fixed32, what);
  }
}
