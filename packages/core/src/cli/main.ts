#!/usr/bin/env node
import { HARNESS_VERSION } from '../version.js';
import { ConfigError } from '../config/load.js';
import { PluginLoadError } from '../plugins/registry.js';
import { QueryError, StoreFullError, StoreLockedError, StoreNotFoundError, StoreSchemaError, StoreUnreadableError } from '../store/index.js';
import { terminalSafe } from '../text/terminal.js';
import { EXIT, UsageError, helpText, parseCommandArgs, type Command } from './command.js';
import { compareCommand } from './commands/compare.js';
import { doctorCommand } from './commands/doctor.js';
import { enginesCommand } from './commands/engines.js';
import { exportCommand } from './commands/export.js';
import { inspectCommand } from './commands/inspect.js';
import { historyCommand } from './commands/history.js';
import { mergeCommand } from './commands/merge.js';
import { pruneCommand } from './commands/prune.js';
import { quantizeCommand } from './commands/quantize.js';
import { queryCommand } from './commands/query.js';
import { runCommand } from './commands/run.js';
import { schemaCommand } from './commands/schema.js';
import { siteCommand } from './commands/site.js';
import { sweepCommand } from './commands/sweep.js';
import { SweepFileError } from '../cluster/sweep-file.js';

const COMMANDS: Command[] = [runCommand, enginesCommand, inspectCommand, pruneCommand, quantizeCommand, queryCommand, historyCommand, compareCommand, exportCommand, schemaCommand, doctorCommand, siteCommand, sweepCommand, mergeCommand];

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `pbh ${HARNESS_VERSION}: Performance Benchmark Harness

Usage: pbh <command> [options]    (pbh <command> --help for details)

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Exit codes: 0 ok; 1 ran, but some cells failed/timed out/were invalid or engines are unavailable;
2 bad usage, config, plugin, SQL or input file; 3 database locked, missing or unreadable;
130 interrupted (Ctrl-C); 143 terminated (SIGTERM).
`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(mainHelp());
    return name ? EXIT.ok : EXIT.usage;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${HARNESS_VERSION}\n`);
    return EXIT.ok;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) throw new UsageError(`unknown command "${name}". Commands: ${COMMANDS.map((c) => c.name).join(', ')}.`);
  const args = parseCommandArgs(cmd, rest);
  if (args.values.help) {
    process.stdout.write(helpText(cmd));
    return EXIT.ok;
  }
  return cmd.run(args);
}

/** The README's exit codes: what the error is about decides, not which command met it. */
function exitCodeOf(error: unknown): number {
  if (error instanceof StoreLockedError || error instanceof StoreFullError || error instanceof StoreNotFoundError || error instanceof StoreUnreadableError || error instanceof StoreSchemaError) {
    return EXIT.store;
  }
  if (error instanceof UsageError || error instanceof SweepFileError || error instanceof ConfigError || error instanceof PluginLoadError || error instanceof QueryError) return EXIT.usage;
  return EXIT.partial;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    const err = e instanceof Error ? e : new Error(String(e));
    // Messages quote names and paths from configs and databases: shown escaped, never sent to the terminal raw.
    process.stderr.write(`pbh: ${terminalSafe(err.message, { keepNewlines: true })}\n`);
    if (process.env.PBH_DEBUG && err.stack) process.stderr.write(`${terminalSafe(err.stack, { keepNewlines: true })}\n`);
    process.exitCode = exitCodeOf(e);
  },
);
