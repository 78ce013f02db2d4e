/** Human-readable text for `pbh inspect model.onnx`. */
import type { ModelAnalysis, TensorInfo } from './analyze.js';

const TOP_NODES = 10;
const TOP_TENSORS = 8;

/** 1234567 -> "1.23 M"; below 1000 the exact integer. */
export function formatCount(n: number): string {
  const units: [number, string][] = [
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [scale, unit] of units) if (Math.abs(n) >= scale) return `${(n / scale).toFixed(2)} ${unit}`;
  return String(Math.round(n));
}

/** 1.23e9 -> "1.23 GFLOPs". */
export function formatFlops(n: number): string {
  const units: [number, string][] = [
    [1e12, 'TFLOPs'],
    [1e9, 'GFLOPs'],
    [1e6, 'MFLOPs'],
    [1e3, 'kFLOPs'],
  ];
  for (const [scale, unit] of units) if (Math.abs(n) >= scale) return `${(n / scale).toFixed(2)} ${unit}`;
  return `${Math.round(n)} FLOPs`;
}

export function formatBytes(n: number): string {
  const units: [number, string][] = [
    [1024 ** 3, 'GiB'],
    [1024 ** 2, 'MiB'],
    [1024, 'KiB'],
  ];
  for (const [scale, unit] of units) if (n >= scale) return `${(n / scale).toFixed(1)} ${unit}`;
  return `${n} B`;
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

function shapeText(shape: readonly (number | string | null)[] | null): string {
  if (!shape) return '?';
  return `[${shape.map((d) => (d === null ? '?' : String(d))).join(', ')}]`;
}

/** Left-aligned text columns; the last column is not padded. */
function table(header: string[], rows: string[][], indent = '  '): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  return all.map((r) => indent + r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ').trimEnd());
}

function ioTable(title: string, items: TensorInfo[]): string[] {
  if (items.length === 0) return [`${title}: none`];
  return [title, ...table(['name', 'dtype', 'shape'], items.map((t) => [t.name, t.dtype, shapeText(t.shape)]))];
}

/** What the metadata says was done to the weights, next to what the weights hold (the Sparsity line above). */
function optimizationLines(a: ModelAnalysis): string[] {
  const o = a.optimization;
  if (!o) return [];
  const pattern = o.kind === 'n_m' ? `${o.n}:${o.m} (at most ${o.n} nonzeros in every ${o.m})` : 'unstructured';
  const calibration = o.calibration ? `, calibration ${o.calibration.source} (${o.calibration.samples} samples)` : ', no calibration';
  const lines = [
    `Optimization  ${o.method} ${pattern}, target ${pct(o.target)}, actual ${pct(o.actual)} over ${o.layers.length} pruned layer(s) ` +
      `(${o.tool} from ${o.source.file}${calibration})`,
  ];
  const layers = [...o.layers].sort((x, y) => y.elements - x.elements).slice(0, TOP_TENSORS);
  lines.push(
    ...table(
      ['layer', 'op', 'shape', 'sparsity', 'rel. error'],
      layers.map((l) => [l.node, l.op, shapeText(l.shape), pct(l.sparsity), l.relative_error === null ? '-' : l.relative_error.toExponential(2)]),
    ),
  );
  if (o.layers.length > TOP_TENSORS) lines.push(`  … ${o.layers.length - TOP_TENSORS} more (use --json)`);
  if (o.skipped_layers.length > 0) lines.push(`  not pruned: ${o.skipped_layers.map((s) => `${s.node} (${s.reason})`).join('; ')}`);
  return lines;
}

/** What pbh quantize recorded: the method and library, the dtypes read from the graph, the calibration. */
function quantizationLines(a: ModelAnalysis): string[] {
  const q = a.quantizationFacts;
  if (!q) return [];
  const calibration = q.calibration ? `calibration ${q.calibration.source} (${q.calibration.samples} samples)` : 'no calibration';
  const check = q.check ? `; against its source on ${q.check.samples} calibration samples: argmax agreement ${pct(q.check.agreement)}, max abs error ${q.check.max_abs_error.toPrecision(3)}` : '';
  return [
    `Quantized by  ${q.tool}: ${q.method} (${q.library.name} ${q.library.version}, ${q.call}), ${q.scheme} ${q.format}, weights ${q.weight_dtype ?? '?'} ` +
      `${q.block_size ? `in blocks of ${q.block_size}` : q.per_channel ? 'per-channel' : 'per-tensor'}, activations ${q.activation_dtype ?? (q.scheme === 'weight_only' ? 'float' : '?')}, ${calibration}, from ${q.source.file}${check}`,
  ];
}

export function formatModelReport(a: ModelAnalysis): string {
  const lines: string[] = [];
  lines.push(a.path);
  lines.push(
    `  size ${formatBytes(a.sizeBytes)}  sha256 ${a.sha256.slice(0, 16)}…  IR ${a.irVersion}  opset ${a.opset ?? 'none'}` +
      (a.producer ? `  producer ${a.producer}` : ''),
  );
  const otherOpsets = a.opsetImports.filter((o) => o.domain !== '');
  if (otherOpsets.length > 0) lines.push(`  other opsets: ${otherOpsets.map((o) => `${o.domain} v${o.version}`).join(', ')}`);
  lines.push('');
  lines.push(...ioTable('Inputs', a.inputs));
  lines.push(...ioTable('Outputs', a.outputs));
  lines.push('');

  lines.push(`Parameters    ${formatCount(a.parameters)} (${a.parameters.toLocaleString('en-US')})`);
  const batchNote = a.batchSize === 1 ? 'per sample' : `per sample (model batch ${a.batchSize} divided out)`;
  if (a.flopsPerSample === null) {
    lines.push('FLOPs         unknown (no node could be counted)');
  } else {
    const bound = a.flopsLowerBound ? `, lower bound: ${a.unknownShapeOps.length} node(s) not counted` : '';
    lines.push(`FLOPs         ${formatFlops(a.flopsPerSample)} ${batchNote}${bound}`);
    // The full convention is in the JSON (flopsConvention); the headline rule is what readers need here.
    lines.push(`              (${a.flopsConvention.split(';')[0]}; --json has the full convention)`);
    const byOp = Object.entries(a.flopsByOp)
      .filter(([, v]) => v > 0)
      .sort((x, y) => y[1] - x[1]);
    if (byOp.length > 0 && a.flopsPerSample > 0) {
      const total = a.flopsPerSample;
      lines.push(`  by op: ${byOp.map(([op, v]) => `${op} ${formatFlops(v)} (${pct(v / total)})`).join(', ')}`);
    }
  }
  if (a.intOpsPerSample !== null) {
    const byOp = Object.entries(a.intOpsByOp).sort((x, y) => y[1] - x[1]);
    lines.push(`Integer OPs   ${formatFlops(a.intOpsPerSample).replace('FLOPs', 'OPs')} ${batchNote} (integer kernels, not FLOPs: ${byOp.map(([op, v]) => `${op} ${formatFlops(v).replace('FLOPs', 'OPs')}`).join(', ')})`);
  }
  for (const note of a.flopsNotes) lines.push(`  ${note}`);
  if (a.countedAt) lines.push(`  counted at ${Object.entries(a.countedAt).map(([k, v]) => `${k} [${v.join(', ')}]`).join(', ')}`);
  if (a.unboundDims.length > 0) {
    lines.push(`  symbolic dims left unbound: ${a.unboundDims.join(', ')} (nodes depending on them are not counted; pbh run counts them at each cell's shapes)`);
  }
  lines.push('');

  const census = Object.entries(a.opCensus).sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]));
  lines.push(`Ops (${a.nodes.length} nodes): ${census.map(([op, c]) => `${op} ${c}`).join(', ')}`);
  lines.push('');

  const s = a.sparsity;
  const kindText = s.kind === 'n_m' ? `${s.n}:${s.m} structured` : s.kind;
  lines.push(
    `Sparsity      ${pct(s.actual)} zeros over ${s.perTensor.length} weight tensor(s), ${formatCount(s.weightElements)} elements: ${kindText}`,
  );
  if (s.perTensor.length > 0) {
    lines.push(
      `  N:M patterns: ${s.patterns.map((p) => `${p.n}:${p.m} ${p.holds ? `holds (saturation ${pct(p.saturation)})` : 'no'}`).join(', ')}`,
    );
    const tensors = [...s.perTensor].sort((x, y) => y.elements - x.elements).slice(0, TOP_TENSORS);
    lines.push(
      ...table(
        ['weight', 'shape', 'op', 'sparsity', 'N:M'],
        tensors.map((t) => [t.name, shapeText(t.shape), t.consumerOp, pct(t.sparsity), t.nm ?? '-']),
      ),
    );
    if (s.perTensor.length > TOP_TENSORS) lines.push(`  … ${s.perTensor.length - TOP_TENSORS} more (use --json)`);
  }
  lines.push(...optimizationLines(a));
  const q = a.quantizationDetail;
  lines.push(`Quantization  ${q ? `${q.dtype} (${q.style}: ${q.evidence.join(', ')})` : 'none'}`);
  lines.push(...quantizationLines(a));
  lines.push('');

  const top = a.nodes
    .filter((n) => n.flops !== null && n.flops > 0)
    .sort((x, y) => y.flops! - x.flops!)
    .slice(0, TOP_NODES);
  if (top.length > 0 && a.flopsPerSample) {
    lines.push('Top nodes by FLOPs');
    lines.push(
      ...table(
        ['node', 'op', 'output', 'FLOPs', 'share'],
        top.map((n) => [n.name, n.opType, shapeText(n.outputShapes[0] ?? null), formatFlops(n.flops!), pct(n.flops! / a.flopsPerSample!)]),
      ),
    );
    lines.push('');
  }

  if (a.unsupportedOps.length > 0) lines.push(`Ops PBH does not understand: ${a.unsupportedOps.join(', ')}`);
  if (a.unknownShapeOps.length > 0) {
    const shown = a.unknownShapeOps.slice(0, TOP_NODES);
    lines.push(`Nodes not counted in FLOPs (${a.unknownShapeOps.length}):`);
    for (const u of shown) lines.push(`  ${u.node} (${u.opType}): ${u.reason}`);
    if (a.unknownShapeOps.length > shown.length) lines.push(`  … ${a.unknownShapeOps.length - shown.length} more`);
  }
  if (a.externalData.length > 0) {
    lines.push(`External data: ${a.externalData.length} tensor(s) in ${[...new Set(a.externalData.map((e) => e.location))].join(', ')} (not loaded)`);
  }
  if (a.warnings.length > 0) {
    lines.push('Warnings:');
    for (const w of a.warnings.slice(0, TOP_NODES)) lines.push(`  ${w}`);
    if (a.warnings.length > TOP_NODES) lines.push(`  … ${a.warnings.length - TOP_NODES} more`);
  }
  return lines.join('\n').trimEnd();
}
