import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DuplicateCellError, expandCells } from './keys.js';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ExperimentSchema, type Experiment } from './schema.js';
import { didYouMean, keysAtPath } from './suggest.js';
import { expandSweeps, SweepError } from './sweeps.js';

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`Invalid config ${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}\nFix the config (see \`pbh schema\` for every field) and run again.`);
    this.name = 'ConfigError';
  }
}

function formatPath(p: readonly PropertyKey[]): string {
  return p.reduce<string>((acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : acc ? `${acc}.${String(k)}` : String(k)), '') || '(top level)';
}

export function describeIssues(issues: z.core.$ZodIssue[]): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const known = keysAtPath(ExperimentSchema, issue.path);
      return issue.keys.map((key) => {
        const hint = didYouMean(key, known);
        const where = formatPath([...issue.path, key]);
        return `${where}: unknown key "${key}"${hint ? ` (did you mean "${hint}"?)` : ''}. Known keys here: ${known.join(', ')}`;
      });
    }
    return [`${formatPath(issue.path)}: ${issue.message}`];
  });
}

/** A validated experiment plus where it came from; relative paths resolve against the config's folder. */
export interface LoadedExperiment {
  file: string;
  dir: string;
  experiment: Experiment;
  /** The config exactly as the user wrote it, for the Profile's record. */
  raw: Record<string, unknown>;
}

export function parseExperiment(text: string, file: string): LoadedExperiment {
  let raw: unknown;
  try {
    raw = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    throw new ConfigError(file, [`cannot parse ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(e as Error).message}`]);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, ['the file must hold one mapping with name, dataset, models, engines and batch_sizes']);
  }
  const parsed = ExperimentSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(file, describeIssues(parsed.error.issues));
  let experiment: Experiment;
  try {
    experiment = expandSweeps(parsed.data);
    expandCells(experiment);
  } catch (e) {
    if (e instanceof DuplicateCellError || e instanceof SweepError) throw new ConfigError(file, [e.message]);
    throw e;
  }
  return { file, dir: path.dirname(path.resolve(file)), experiment, raw: raw as Record<string, unknown> };
}

export async function loadExperiment(file: string): Promise<LoadedExperiment> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError(file, [code === 'ENOENT' ? `no such file; pass the path of a YAML or JSON experiment config` : (e as Error).message]);
  }
  return parseExperiment(text, file);
}

export function experimentJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ExperimentSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
