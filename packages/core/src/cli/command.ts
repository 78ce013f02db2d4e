import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Exit codes every command shares; documented in `pbh --help` and the README. */
export const EXIT = {
  ok: 0,
  /** The command ran but some of what it measured failed (failed/timeout/invalid cells, unavailable engines). */
  partial: 1,
  /** Bad usage or bad input: config, arguments, files. */
  usage: 2,
  /** The database could not be opened (locked by another process, missing, unreadable). */
  store: 3,
  interrupted: 130,
  terminated: 143,
} as const;

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  help: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(args: { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] }): Promise<number>;
}

export function parseCommandArgs(cmd: Command, argv: string[]): { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { ...cmd.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
    return { values: values as Record<string, string | boolean | string[] | undefined>, positionals };
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\nUsage: ${cmd.usage}`);
  }
}

export function helpText(cmd: Command): string {
  return `Usage: ${cmd.usage}\n\n${cmd.summary}\n\n${cmd.help.trim()}\n`;
}

export const DEFAULT_DB = 'results/pbh.duckdb';
