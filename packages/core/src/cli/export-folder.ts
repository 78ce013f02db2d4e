import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { HARNESS_VERSION } from '../version.js';
import { UsageError } from './command.js';

/** Written into --out after an export, so a later export may replace what this one wrote and nothing else. */
const EXPORT_MARKER = '.pbh-export.json';
const ExportMarkerSchema = z.object({ written_by: z.literal('pbh export'), files: z.array(z.string()) });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Checks --out before anything is written: a folder that does not exist, an empty one, or one an earlier pbh export
 * wrote (its marker lists its files). A file, or a folder holding files pbh export did not write, is refused.
 */
export function checkExportFolder(out: string): string {
  const folder = path.resolve(out);
  if (!existsSync(folder)) return folder;
  if (!statSync(folder).isDirectory()) throw new UsageError(`--out ${out} is a file, not a folder: give pbh export a folder (it is created if missing).`);
  const marker = path.join(folder, EXPORT_MARKER);
  const ours = existsSync(marker) ? ExportMarkerSchema.safeParse(parseJson(readFileSync(marker, 'utf8'))) : undefined;
  const allowed = new Set([EXPORT_MARKER, ...(ours?.success ? ours.data.files : [])]);
  const foreign = readdirSync(folder).filter((name) => !allowed.has(name));
  if (foreign.length > 0) {
    throw new UsageError(
      `--out ${out} holds files pbh export did not write (${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ', ...' : ''}): give an empty or new folder, or one an earlier pbh export wrote.`,
    );
  }
  return folder;
}

/** Records the files written, beside those of earlier exports into the same folder (another format, say). */
export function markExportFolder(folder: string, files: string[]): void {
  const file = path.join(folder, EXPORT_MARKER);
  const earlier = existsSync(file) ? ExportMarkerSchema.safeParse(parseJson(readFileSync(file, 'utf8'))) : undefined;
  const names = new Set([...(earlier?.success ? earlier.data.files : []), ...files.map((f) => path.basename(f))]);
  const marker = { written_by: 'pbh export', pbh_version: HARNESS_VERSION, files: [...names].sort() };
  writeFileSync(file, `${JSON.stringify(marker, null, 2)}\n`);
}
