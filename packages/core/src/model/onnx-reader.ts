/**
 * Decodes an ONNX ModelProto straight from its protobuf bytes (field numbers from onnx/onnx.proto).
 * Tensor payloads stay views into the file buffer; nothing large is copied unless alignment forces it.
 */
import { readFile } from 'node:fs/promises';
import { float32View } from './onnx-access.js';
import {
  expectWireType,
  ProtoReader,
  readRepeatedFloat,
  readRepeatedInt64,
  WireFormatError,
  WireType,
  type FieldHeader,
} from './wire.js';

/** TensorProto.DataType codes -> PBH dtype names. */
export const ONNX_DTYPES: Readonly<Record<number, string>> = {
  1: 'float32',
  2: 'uint8',
  3: 'int8',
  4: 'uint16',
  5: 'int16',
  6: 'int32',
  7: 'int64',
  8: 'string',
  9: 'bool',
  10: 'float16',
  11: 'float64',
  12: 'uint32',
  13: 'uint64',
  14: 'complex64',
  15: 'complex128',
  16: 'bfloat16',
  17: 'float8e4m3fn',
  18: 'float8e4m3fnuz',
  19: 'float8e5m2',
  20: 'float8e5m2fnuz',
  21: 'uint4',
  22: 'int4',
  23: 'float4e2m1',
  24: 'float8e8m0',
  25: 'uint2',
  26: 'int2',
  27: 'float6e2m3',
  28: 'float6e3m2',
};

export function dtypeName(code: number): string {
  return ONNX_DTYPES[code] ?? `onnx_type_${code}`;
}

export interface ExternalDataRef {
  /** Path relative to the model's directory. */
  location: string;
  offset: number | null;
  length: number | null;
}

export interface OnnxTensor {
  name: string;
  dataType: number;
  dtype: string;
  dims: number[];
  /** raw_data as a view into the model file's buffer. */
  rawData: Uint8Array | null;
  floatData: Float32Array | null;
  /** int32_data: also carries int8/uint8/int16/uint16/bool and the bits of float16/bfloat16. */
  int32Data: Int32Array | null;
  int64Data: number[] | null;
  doubleData: Float64Array | null;
  uint64Data: number[] | null;
  stringCount: number;
  /** Set when the payload lives in another file (data_location = EXTERNAL); PBH does not load it. */
  external: ExternalDataRef | null;
}

export interface OnnxSparseTensor {
  values: OnnxTensor | null;
  indices: OnnxTensor | null;
  dims: number[];
}

export type OnnxAttribute =
  | { name: string; type: 'float'; value: number }
  | { name: string; type: 'int'; value: number }
  | { name: string; type: 'string'; value: string }
  | { name: string; type: 'tensor'; value: OnnxTensor }
  | { name: string; type: 'graph'; value: OnnxGraph }
  | { name: string; type: 'floats'; value: number[] }
  | { name: string; type: 'ints'; value: number[] }
  | { name: string; type: 'strings'; value: string[] }
  | { name: string; type: 'tensors'; value: OnnxTensor[] }
  | { name: string; type: 'graphs'; value: OnnxGraph[] }
  /** Sparse tensors, type protos and function attribute references: kept by name only. */
  | { name: string; type: 'other'; typeCode: number };

export interface OnnxNode {
  name: string;
  opType: string;
  /** '' for the default ONNX domain ('ai.onnx' is normalised to ''). */
  domain: string;
  inputs: string[];
  outputs: string[];
  attributes: Record<string, OnnxAttribute>;
}

/** A dim is dim_value (number), dim_param (string), or null when neither is set. */
export type OnnxDim = number | string | null;

export type OnnxType =
  | { kind: 'tensor'; elemType: number; dtype: string; shape: OnnxDim[] | null }
  | { kind: 'sparse_tensor'; elemType: number; dtype: string; shape: OnnxDim[] | null }
  | { kind: 'sequence' | 'map' | 'optional' | 'opaque' | 'unknown' };

export interface OnnxValueInfo {
  name: string;
  type: OnnxType;
}

export interface OnnxGraph {
  name: string;
  nodes: OnnxNode[];
  initializers: OnnxTensor[];
  sparseInitializers: OnnxSparseTensor[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
  valueInfo: OnnxValueInfo[];
}

export interface OnnxOpsetImport {
  domain: string;
  version: number;
}

export interface OnnxModel {
  irVersion: number;
  opsetImport: OnnxOpsetImport[];
  producerName: string;
  producerVersion: string;
  domain: string;
  modelVersion: number;
  docString: string;
  metadata: Record<string, string>;
  graph: OnnxGraph;
  /** Model-local functions (domain/name); nodes calling them are opaque to PBH's analysis. */
  functions: { domain: string; name: string }[];
}

const HOW_TO_EXPORT =
  'Pass a .onnx file exported with torch.onnx.export, tf2onnx, skl2onnx or saved with onnx.save';

/** The bytes given as a model are not a binary ONNX ModelProto. The message is meant for users as is. */
export class OnnxFormatError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file} is not an ONNX model: ${reason}. ${HOW_TO_EXPORT}.`);
    this.name = 'OnnxFormatError';
  }
}

/** Reads and decodes a model file. */
export async function readOnnxModel(path: string): Promise<{ model: OnnxModel; bytes: Buffer }> {
  const bytes = await readFile(path);
  return { model: decodeOnnxModel(bytes, path), bytes };
}

/**
 * Decodes ModelProto bytes. `label` names the source (a path) in errors.
 * Throws OnnxFormatError when the bytes are recognisably something else or do not parse as a ModelProto.
 */
export function decodeOnnxModel(bytes: Uint8Array, label: string): OnnxModel {
  const sniffed = recogniseNonOnnx(bytes);
  if (sniffed) throw new OnnxFormatError(label, sniffed);
  let model: Partial<OnnxModel> & { graph?: OnnxGraph; irVersion?: number };
  try {
    model = parseModel(new ProtoReader(bytes));
  } catch (err) {
    if (err instanceof WireFormatError) {
      throw new OnnxFormatError(label, `its bytes do not parse as a protobuf ModelProto (${err.message})`);
    }
    throw err;
  }
  if (model.irVersion === undefined) {
    throw new OnnxFormatError(label, 'it parses as protobuf but has no ir_version (ModelProto field 1)');
  }
  if (!model.graph) {
    throw new OnnxFormatError(label, 'it parses as protobuf but has no graph (ModelProto field 7)');
  }
  return {
    irVersion: model.irVersion,
    opsetImport: model.opsetImport ?? [],
    producerName: model.producerName ?? '',
    producerVersion: model.producerVersion ?? '',
    domain: model.domain ?? '',
    modelVersion: model.modelVersion ?? 0,
    docString: model.docString ?? '',
    metadata: model.metadata ?? {},
    graph: model.graph,
    functions: model.functions ?? [],
  };
}

const MAGIC: { bytes: number[]; offset?: number; what: string }[] = [
  { bytes: [0x89, 0x50, 0x4e, 0x47], what: 'it is a PNG image' },
  { bytes: [0xff, 0xd8, 0xff], what: 'it is a JPEG image' },
  { bytes: [0x47, 0x49, 0x46, 0x38], what: 'it is a GIF image' },
  { bytes: [0x50, 0x4b, 0x03, 0x04], what: 'it is a ZIP archive (a PyTorch .pt/.pth checkpoint or a Keras .keras file?)' },
  { bytes: [0x89, 0x48, 0x44, 0x46], what: 'it is an HDF5 file (a Keras .h5 model?)' },
  { bytes: [0x1f, 0x8b], what: 'it is gzip-compressed (decompress it first)' },
  { bytes: [0x54, 0x46, 0x4c, 0x33], offset: 4, what: 'it is a TensorFlow Lite flatbuffer' },
  { bytes: [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59], what: 'it is a NumPy .npy array' },
];

/** Names well-known non-ONNX content before trying to parse it, so the error says what the file actually is. */
function recogniseNonOnnx(bytes: Uint8Array): string | null {
  if (bytes.length === 0) return 'the file is empty';
  for (const m of MAGIC) {
    const off = m.offset ?? 0;
    if (bytes.length >= off + m.bytes.length && m.bytes.every((b, i) => bytes[off + i] === b)) return m.what;
  }
  // Pickle protocol 2..5 starts with PROTO opcode 0x80 then the version byte.
  if (bytes.length > 2 && bytes[0] === 0x80 && bytes[1]! >= 2 && bytes[1]! <= 5) {
    return 'it is a Python pickle (a PyTorch or scikit-learn checkpoint?)';
  }
  const head = bytes.subarray(0, Math.min(bytes.length, 512));
  if (looksLikeText(head)) {
    const text = new TextDecoder('utf-8').decode(head).trimStart();
    const firstLine = (text.split('\n')[0] ?? '').slice(0, 60);
    if (text.startsWith('version https://git-lfs')) return 'it is a Git LFS pointer, not the model itself (run `git lfs pull`)';
    if (/^<(!doctype|html)/i.test(text)) return 'it is an HTML page (a failed download?)';
    if (/^(ir_version|graph\s*\{|opset_import)/.test(text)) {
      return 'it is ONNX in protobuf text format; PBH reads the binary format (convert it with onnx.save)';
    }
    return `it is a text file (it starts with ${JSON.stringify(firstLine)})`;
  }
  return null;
}

function looksLikeText(head: Uint8Array): boolean {
  // A binary ModelProto starts with tag 0x08 (ir_version varint) and holds control bytes almost at once.
  for (const b of head) {
    if (b === 0x09 || b === 0x0a || b === 0x0d) continue;
    if (b < 0x20 || b === 0x7f) return false;
  }
  return true;
}

function parseModel(r: ProtoReader): Partial<OnnxModel> {
  const m: Partial<OnnxModel> = { opsetImport: [], metadata: {}, functions: [] };
  while (!r.done()) {
    const h = r.readHeader();
    switch (h.field) {
      case 1:
        expectWireType(h, WireType.Varint, 'ModelProto.ir_version');
        m.irVersion = r.readInt64();
        break;
      case 2:
        m.producerName = readStringField(r, h, 'ModelProto.producer_name');
        break;
      case 3:
        m.producerVersion = readStringField(r, h, 'ModelProto.producer_version');
        break;
      case 4:
        m.domain = readStringField(r, h, 'ModelProto.domain');
        break;
      case 5:
        expectWireType(h, WireType.Varint, 'ModelProto.model_version');
        m.modelVersion = r.readInt64();
        break;
      case 6:
        m.docString = readStringField(r, h, 'ModelProto.doc_string');
        break;
      case 7:
        m.graph = parseGraph(messageField(r, h, 'ModelProto.graph'));
        break;
      case 8:
        m.opsetImport!.push(parseOpset(messageField(r, h, 'ModelProto.opset_import')));
        break;
      case 14: {
        const [k, v] = parseStringPair(messageField(r, h, 'ModelProto.metadata_props'));
        m.metadata![k] = v;
        break;
      }
      case 25:
        m.functions!.push(parseFunctionName(messageField(r, h, 'ModelProto.functions')));
        break;
      default:
        r.skip(h.wireType, h.at);
    }
  }
  return m;
}

function messageField(r: ProtoReader, h: FieldHeader, what: string): ProtoReader {
  expectWireType(h, WireType.LengthDelimited, what);
  return r.readMessage();
}

function readStringField(r: ProtoReader, h: FieldHeader, what: string): string {
  expectWireType(h, WireType.LengthDelimited, what);
  return r.readString();
}

function parseOpset(r: ProtoReader): OnnxOpsetImport {
  let domain = '';
  let version = 0;
  while (!r.done()) {
    const h = r.readHeader();
    if (h.field === 1) domain = readStringField(r, h, 'OperatorSetIdProto.domain');
    else if (h.field === 2) {
      expectWireType(h, WireType.Varint, 'OperatorSetIdProto.version');
      version = r.readInt64();
    } else r.skip(h.wireType, h.at);
  }
  return { domain: normaliseDomain(domain), version };
}

function normaliseDomain(domain: string): string {
  return domain === 'ai.onnx' ? '' : domain;
}

function parseStringPair(r: ProtoReader): [string, string] {
  let key = '';
  let value = '';
  while (!r.done()) {
    const h = r.readHeader();
    if (h.field === 1) key = readStringField(r, h, 'StringStringEntryProto.key');
    else if (h.field === 2) value = readStringField(r, h, 'StringStringEntryProto.value');
    else r.skip(h.wireType, h.at);
  }
  return [key, value];
}

function parseFunctionName(r: ProtoReader): { domain: string; name: string } {
  let name = '';
  let domain = '';
  while (!r.done()) {
    const h = r.readHeader();
    if (h.field === 1) name = readStringField(r, h, 'FunctionProto.name');
    else if (h.field === 10) domain = readStringField(r, h, 'FunctionProto.domain');
    else r.skip(h.wireType, h.at);
  }
  return { domain, name };
}

function parseGraph(r: ProtoReader): OnnxGraph {
  const g: OnnxGraph = {
    name: '',
    nodes: [],
    initializers: [],
    sparseInitializers: [],
    inputs: [],
    outputs: [],
    valueInfo: [],
  };
  while (!r.done()) {
    const h = r.readHeader();
    switch (h.field) {
      case 1:
        g.nodes.push(parseNode(messageField(r, h, 'GraphProto.node')));
        break;
      case 2:
        g.name = readStringField(r, h, 'GraphProto.name');
        break;
      case 5:
        g.initializers.push(parseTensor(messageField(r, h, 'GraphProto.initializer')));
        break;
      case 11:
        g.inputs.push(parseValueInfo(messageField(r, h, 'GraphProto.input')));
        break;
      case 12:
        g.outputs.push(parseValueInfo(messageField(r, h, 'GraphProto.output')));
        break;
      case 13:
        g.valueInfo.push(parseValueInfo(messageField(r, h, 'GraphProto.value_info')));
        break;
      case 15:
        g.sparseInitializers.push(parseSparseTensor(messageField(r, h, 'GraphProto.sparse_initializer')));
        break;
      default:
        r.skip(h.wireType, h.at);
    }
  }
  return g;
}

function parseNode(r: ProtoReader): OnnxNode {
  const n: OnnxNode = { name: '', opType: '', domain: '', inputs: [], outputs: [], attributes: {} };
  while (!r.done()) {
    const h = r.readHeader();
    switch (h.field) {
      case 1:
        n.inputs.push(readStringField(r, h, 'NodeProto.input'));
        break;
      case 2:
        n.outputs.push(readStringField(r, h, 'NodeProto.output'));
        break;
      case 3:
        n.name = readStringField(r, h, 'NodeProto.name');
        break;
      case 4:
        n.opType = readStringField(r, h, 'NodeProto.op_type');
        break;
      case 5: {
        const a = parseAttribute(messageField(r, h, 'NodeProto.attribute'));
        n.attributes[a.name] = a;
        break;
      }
      case 7:
        n.domain = normaliseDomain(readStringField(r, h, 'NodeProto.domain'));
        break;
      default:
        r.skip(h.wireType, h.at);
    }
  }
  return n;
}

/** AttributeProto.AttributeType codes. */
const AttrType = {
  FLOAT: 1,
  INT: 2,
  STRING: 3,
  TENSOR: 4,
  GRAPH: 5,
  FLOATS: 6,
  INTS: 7,
  STRINGS: 8,
  TENSORS: 9,
  GRAPHS: 10,
} as const;

function parseAttribute(r: ProtoReader): OnnxAttribute {
  let name = '';
  let typeCode: number | null = null;
  let f: number | null = null;
  let i: number | null = null;
  let s: string | null = null;
  let t: OnnxTensor | null = null;
  let g: OnnxGraph | null = null;
  let refAttr = false;
  const floats: number[] = [];
  const ints: number[] = [];
  const strings: string[] = [];
  const tensors: OnnxTensor[] = [];
  const graphs: OnnxGraph[] = [];
  while (!r.done()) {
    const h = r.readHeader();
    switch (h.field) {
      case 1:
        name = readStringField(r, h, 'AttributeProto.name');
        break;
      case 2:
        expectWireType(h, WireType.Fixed32, 'AttributeProto.f');
        f = r.readFixed32Float();
        break;
      case 3:
        expectWireType(h, WireType.Varint, 'AttributeProto.i');
        i = r.readInt64();
        break;
      case 4:
        s = readStringField(r, h, 'AttributeProto.s');
        break;
      case 5:
        t = parseTensor(messageField(r, h, 'AttributeProto.t'));
        break;
      case 6:
        g = parseGraph(messageField(r, h, 'AttributeProto.g'));
        break;
      case 7:
        readRepeatedFloat(r, h, floats, 'AttributeProto.floats');
        break;
      case 8:
        readRepeatedInt64(r, h, ints, 'AttributeProto.ints');
        break;
      case 9:
        strings.push(readStringField(r, h, 'AttributeProto.strings'));
        break;
      case 10:
        tensors.push(parseTensor(messageField(r, h, 'AttributeProto.tensors')));
        break;
      case 11:
        graphs.push(parseGraph(messageField(r, h, 'AttributeProto.graphs')));
        break;
      case 20:
        expectWireType(h, WireType.Varint, 'AttributeProto.type');
        typeCode = r.readInt64();
        break;
      case 21:
        readStringField(r, h, 'AttributeProto.ref_attr_name');
        refAttr = true;
        break;
      default:
        r.skip(h.wireType, h.at);
    }
  }
  if (refAttr) return { name, type: 'other', typeCode: typeCode ?? 0 };
  // IR < 3 writers may omit `type`; the populated field says which one it is.
  const code =
    typeCode ??
    (t ? AttrType.TENSOR
    : g ? AttrType.GRAPH
    : s !== null ? AttrType.STRING
    : i !== null ? AttrType.INT
    : f !== null ? AttrType.FLOAT
    : floats.length ? AttrType.FLOATS
    : ints.length ? AttrType.INTS
    : strings.length ? AttrType.STRINGS
    : tensors.length ? AttrType.TENSORS
    : graphs.length ? AttrType.GRAPHS
    : 0);
  switch (code) {
    case AttrType.FLOAT:
      return { name, type: 'float', value: f ?? 0 };
    case AttrType.INT:
      return { name, type: 'int', value: i ?? 0 };
    case AttrType.STRING:
      return { name, type: 'string', value: s ?? '' };
    case AttrType.TENSOR:
      return t ? { name, type: 'tensor', value: t } : { name, type: 'other', typeCode: code };
    case AttrType.GRAPH:
      return g ? { name, type: 'graph', value: g } : { name, type: 'other', typeCode: code };
    case AttrType.FLOATS:
      return { name, type: 'floats', value: floats };
    case AttrType.INTS:
      return { name, type: 'ints', value: ints };
    case AttrType.STRINGS:
      return { name, type: 'strings', value: strings };
    case AttrType.TENSORS:
      return { name, type: 'tensors', value: tensors };
    case AttrType.GRAPHS:
      return { name, type: 'graphs', value: graphs };
    default:
      return { name, type: 'other', typeCode: code };
  }
}

function parseTensor(r: ProtoReader): OnnxTensor {
  const t: OnnxTensor = {
    name: '',
    dataType: 0,
    dtype: '',
    dims: [],
    rawData: null,
    floatData: null,
    int32Data: null,
    int64Data: null,
    doubleData: null,
    uint64Data: null,
    stringCount: 0,
    external: null,
  };
  let floats: number[] | null = null;
  let int32s: number[] | null = null;
  let doubles: number[] | null = null;
  let externalLocation = false;
  const externalEntries: Record<string, string> = {};
  while (!r.done()) {
    const h = r.readHeader();
    switch (h.field) {
      case 1:
        readRepeatedInt64(r, h, t.dims, 'TensorProto.dims');
        break;
      case 2:
        expectWireType(h, WireType.Varint, 'TensorProto.data_type');
        t.dataType = r.readInt64();
        break;
      case 4:
        if (h.wireType === WireType.LengthDelimited) {
          t.floatData = concatFloat32(t.floatData, float32View(r.readBytes()));
        } else {
          readRepeatedFloat(r, h, (floats ??= []), 'TensorProto.float_data');
        }
        break;
      case 5:
        readRepeatedInt64(r, h, (int32s ??= []), 'TensorProto.int32_data');
        break;
      case 6:
        expectWireType(h, WireType.LengthDelimited, 'TensorProto.string_data');
        r.readBytes();
        t.stringCount++;
        break;
      case 7:
        readRepeatedInt64(r, h, (t.int64Data ??= []), 'TensorProto.int64_data');
        break;
      case 8:
        t.name = readStringField(r, h, 'TensorProto.name');
        break;
      case 9:
        expectWireType(h, WireType.LengthDelimited, 'TensorProto.raw_data');
        t.rawData = r.readBytes();
        break;
      case 10:
        if (h.wireType === WireType.LengthDelimited) {
          const sub = r.readMessage();
          doubles ??= [];
          while (!sub.done()) doubles.push(sub.readFixed64Double());
        } else {
          expectWireType(h, WireType.Fixed64, 'TensorProto.double_data');
          (doubles ??= []).push(r.readFixed64Double());
        }
        break;
      case 11:
        readRepeatedInt64(r, h, (t.uint64Data ??= []), 'TensorProto.uint64_data');
        break;
      case 13: {
        const [k, v] = parseStringPair(messageField(r, h, 'TensorProto.external_data'));
        externalEntries[k] = v;
        break;
      }
      case 14:
        expectWireType(h, WireType.Varint, 'TensorProto.data_location');
        externalLocation = r.readInt64() === 1;
        break;
      default:
        r.skip(h.wireType, h.at);
    }
  }
  t.dtype = dtypeName(t.dataType);
  if (floats) t.floatData = concatFloat32(t.floatData, Float32Array.from(floats));
  if (int32s) t.int32Data = Int32Array.from(int32s);
  if (doubles) t.doubleData = Float64Array.from(doubles);
  if (externalLocation || externalEntries['location'] !== undefined) {
    const num = (v: string | undefined): number | null => (v === undefined ? null : Number(v));
    t.external = {
      location: externalEntries['location'] ?? '',
      offset: num(externalEntries['offset']),
      length: num(externalEntries['length']),
    };
  }
  return t;
}

function concatFloat32(a: Float32Array | null, b: Float32Array): Float32Array {
  if (!a) return b;
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function parseSparseTensor(r: ProtoReader): OnnxSparseTensor {
  const s: OnnxSparseTensor = { values: null, indices: null, dims: [] };
  while (!r.done()) {
    const h = r.readHeader();
    if (h.field === 1) s.values = parseTensor(messageField(r, h, 'SparseTensorProto.values'));
    else if (h.field === 2) s.indices = parseTensor(messageField(r, h, 'SparseTensorProto.indices'));
    else if (h.field === 3) readRepeatedInt64(r, h, s.dims, 'SparseTensorProto.dims');
    else r.skip(h.wireType, h.at);
  }
  return s;
}

function parseValueInfo(r: ProtoReader): OnnxValueInfo {
  let name = '';
  let type: OnnxType = { kind: 'unknown' };
  while (!r.done()) {
    const h = r.readHeader();
    if (h.field === 1) name = readStringField(r, h, 'ValueInfoProto.name');
    else if (h.field === 2) type = parseType(messageField(r, h, 'ValueInfoProto.type'));
    else r.skip(h.wireType, h.at);
  }
  return { name, type };
}

function parseType(r: ProtoReader): OnnxType {
  let type: OnnxType = { kind: 'unknown' };
  while (!r.done()) {
    const h = r.readHeader();
    switch (h.field) {
      case 1:
        type = { kind: 'tensor', ...parseTensorType(messageField(r, h, 'TypeProto.tensor_type')) };
        break;
      case 8:
        type = { kind: 'sparse_tensor', ...parseTensorType(messageField(r, h, 'TypeProto.sparse_tensor_type')) };
        break;
      case 4:
      case 5:
      case 7:
      case 9: {
        const kinds = { 4: 'sequence', 5: 'map', 7: 'opaque', 9: 'optional' } as const;
        messageField(r, h, 'TypeProto');
        type = { kind: kinds[h.field] };
        break;
      }
      default:
        r.skip(h.wireType, h.at);
    }
  }
  return type;
}

function parseTensorType(r: ProtoReader): { elemType: number; dtype: string; shape: OnnxDim[] | null } {
  let elemType = 0;
  let shape: OnnxDim[] | null = null;
  while (!r.done()) {
    const h = r.readHeader();
    if (h.field === 1) {
      expectWireType(h, WireType.Varint, 'TypeProto.Tensor.elem_type');
      elemType = r.readInt64();
    } else if (h.field === 2) {
      shape = parseShape(messageField(r, h, 'TypeProto.Tensor.shape'));
    } else r.skip(h.wireType, h.at);
  }
  return { elemType, dtype: dtypeName(elemType), shape };
}

function parseShape(r: ProtoReader): OnnxDim[] {
  const dims: OnnxDim[] = [];
  while (!r.done()) {
    const h = r.readHeader();
    if (h.field !== 1) {
      r.skip(h.wireType, h.at);
      continue;
    }
    const d = messageField(r, h, 'TensorShapeProto.dim');
    let dim: OnnxDim = null;
    while (!d.done()) {
      const dh = d.readHeader();
      if (dh.field === 1) {
        expectWireType(dh, WireType.Varint, 'Dimension.dim_value');
        dim = d.readInt64();
      } else if (dh.field === 2) {
        dim = readStringField(d, dh, 'Dimension.dim_param');
      } else d.skip(dh.wireType, dh.at);
    }
    dims.push(dim);
  }
  return dims;
}
