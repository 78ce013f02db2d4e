#!/usr/bin/env node
import { HARNESS_VERSION } from '../version.js';
import { ConfigError } from '../config/load.js';
import { StoreLockedError, StoreNotFoundError } from '../store/index.js';
import { EXIT, UsageError, helpText, parseCommandArgs, type Command } from './command.js';
import { doctorCommand } from './commands/doctor.js';
import { enginesCommand } from './commands/engines.js';
import { exportCommand } from './commands/export.js';
import { inspectCommand } from './commands/inspect.js';
import { queryCommand } from './commands/query.js';
import { runCommand } from './commands/run.js';
import { schemaCommand } from './commands/schema.js';
import { siteCommand } from './commands/site.js';

const COMMANDS: Command[] = [runCommand, enginesCommand, inspectCommand, queryCommand, exportCommand, schemaCommand, doctorCommand, siteCommand];

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `pbh ${HARNESS_VERSION}: Performance Benchmark Harness

Usage: pbh <command> [options]    (pbh <command> --help for details)

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Exit codes: 0 ok; 1 ran, but some cells failed/timed out/were invalid or engines are unavailable;
2 bad usage, config or input file; 3 database locked, missing or unreadable; 130 interrupted (Ctrl-C).
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

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    const err = e as Error;
    process.stderr.write(`pbh: ${err.message}\n`);
    if (process.env.PBH_DEBUG && err.stack) process.stderr.write(`${err.stack}\n`);
    process.exitCode = e instanceof StoreLockedError || e instanceof StoreNotFoundError ? EXIT.store : e instanceof UsageError || e instanceof ConfigError ? EXIT.usage : err.name === 'StoreSchemaError' ? EXIT.store : EXIT.partial;
  },
);
