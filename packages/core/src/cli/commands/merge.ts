import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describeConflict, mergeShards, MergeInputError } from '../../store/merge.js';
import { DEFAULT_DB, EXIT, UsageError, type Command } from '../command.js';

/** A folder stands for the .duckdb files directly in it (a sweep's shards/ folder), in name order. */
function expandShards(args: string[]): string[] {
  return args.flatMap((arg) => {
    let isFolder = false;
    try {
      isFolder = statSync(arg).isDirectory();
    } catch {
      return [arg]; // missing: the store's own open says so, naming the file
    }
    if (!isFolder) return [arg];
    const files = readdirSync(arg).filter((f) => f.endsWith('.duckdb')).sort().map((f) => path.join(arg, f));
    if (files.length === 0) throw new UsageError(`${arg} is a folder with no .duckdb files in it: nothing to merge from there.`);
    return files;
  });
}

export const mergeCommand: Command = {
  name: 'merge',
  summary: 'fold shard databases (one per cluster task) into one database, idempotently',
  usage: 'pbh merge SHARD|FOLDER... [--db PATH]',
  help: `
Copies every run, system and Profile of each SHARD (a PBH database, e.g. one written by a Slurm array task of
pbh sweep; a FOLDER means every .duckdb file in it) into the database --db, which is created if missing.

Each Profile is its own transaction, and a Profile already stored with the same content is skipped: merging the
same shards again changes nothing, and a merge stopped anywhere (Ctrl-C, a kill, a lost node) is completed by
running it again. Each node's system record is kept, so results from many machines stay apart (the site's
hardware filter). Every shard is opened read-only and checked first: one that is locked (its task still running),
unreadable, or written by a newer pbh stops the merge before anything is written.

Options:
  --db PATH   the database to merge into (default ${DEFAULT_DB})

Exit code 0 when everything merged; 2 when a Profile or run id is stored with different content (each conflict
names both files; the rest is merged); 3 when a shard or the database cannot be opened; 130 on Ctrl-C.`,
  options: { db: { type: 'string' } },
  async run({ values, positionals }) {
    if (positionals.length === 0) throw new UsageError(`pbh merge needs shard databases, e.g. pbh merge sweeps/digits/shards --db ${DEFAULT_DB}`);
    const shards = expandShards(positionals);
    let interrupted = false;
    const onSignal = (): void => {
      if (interrupted) process.exit(EXIT.interrupted);
      interrupted = true;
      process.stderr.write('\nInterrupted: stopping after the Profile in hand is stored (Ctrl-C again to quit at once; a rerun completes the merge).\n');
    };
    process.on('SIGINT', onSignal);
    try {
      const result = await mergeShards({
        target: (values.db as string | undefined) ?? DEFAULT_DB,
        shards,
        shouldStop: () => interrupted,
        onShard: (s) => {
          const refused = s.profilesRefused > 0 ? `, ${s.profilesRefused} refused` : '';
          process.stdout.write(`${s.file}: ${s.profilesAdded} Profile(s) added, ${s.profilesPresent} already stored${refused}; ${s.runsAdded} run(s) added\n`);
        },
      });
      const added = result.shards.reduce((n, s) => n + s.profilesAdded, 0);
      const present = result.shards.reduce((n, s) => n + s.profilesPresent, 0);
      process.stdout.write(`merged ${result.shards.length} of ${shards.length} shard(s) into ${result.target}: ${added} Profile(s) added, ${present} already stored\n`);
      for (const c of result.conflicts) process.stderr.write(`pbh merge: ${describeConflict(c, result.target)}\n`);
      if (result.stopped) return EXIT.interrupted;
      return result.conflicts.length > 0 ? EXIT.usage : EXIT.ok;
    } catch (error) {
      if (error instanceof MergeInputError) throw new UsageError(error.message);
      throw error;
    } finally {
      process.off('SIGINT', onSignal);
    }
  },
};
