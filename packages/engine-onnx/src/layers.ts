import { readFile, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { LayerTiming } from '@pbh/core';

const EventSchema = z.object({
  cat: z.string(),
  name: z.string(),
  dur: z.number(),
  args: z.object({ op_name: z.string().optional(), input_type_shape: z.unknown().optional(), output_type_shape: z.unknown().optional() }).passthrough().optional(),
});

/**
 * onnxruntime-node's endProfiling() does not return the file name, so we look for `<prefix>_*.json`.
 * Per-op events have cat "Node", names ending "_kernel_time", dur in µs.
 */
export async function readOrtProfile(dir: string, prefix: string, iterations: number): Promise<LayerTiming[]> {
  const base = path.basename(prefix);
  const files = (await readdir(dir)).filter((f) => f.startsWith(`${base}_`) && f.endsWith('.json'));
  if (files.length === 0) throw new Error(`onnxruntime wrote no profile file ${prefix}_*.json`);
  const file = path.join(dir, files.sort().at(-1)!);
  const events = z.array(z.unknown()).parse(JSON.parse(await readFile(file, 'utf8')));
  await rm(file, { force: true });
  const byNode = new Map<string, LayerTiming & { totalUs: number }>();
  for (const raw of events) {
    const e = EventSchema.safeParse(raw);
    if (!e.success || e.data.cat !== 'Node' || !e.data.name.endsWith('_kernel_time')) continue;
    const name = e.data.name.slice(0, -'_kernel_time'.length);
    const row = byNode.get(name) ?? {
      name,
      op_type: e.data.args?.op_name ?? 'unknown',
      mean_ns: 0,
      calls: 0,
      totalUs: 0,
      input_shapes: e.data.args?.input_type_shape !== undefined ? JSON.stringify(e.data.args.input_type_shape) : null,
      output_shapes: e.data.args?.output_type_shape !== undefined ? JSON.stringify(e.data.args.output_type_shape) : null,
    };
    row.totalUs += e.data.dur;
    row.calls += 1;
    byNode.set(name, row);
  }
  return [...byNode.values()]
    .map(({ totalUs, ...row }) => ({ ...row, mean_ns: (totalUs * 1000) / iterations, calls: Math.round(row.calls / iterations) }))
    .sort((a, b) => b.mean_ns - a.mean_ns);
}
