import path from 'node:path';
import { missingAssetsMessage, missingGeneratedAssets } from '../../config/generated-assets.js';
import { expandCells } from '../../config/keys.js';
import { loadExperiment } from '../../config/load.js';
import { createProgress } from '../../harness/progress.js';
import { formatSummary } from '../../harness/summary-table.js';
import { runSweep } from '../../harness/sweep.js';
import { terminalSafe } from '../../text/terminal.js';
import { DEFAULT_DB, EXIT, UsageError, type Command } from '../command.js';

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export const runCommand: Command = {
  name: 'run',
  summary: 'run a sweep from an experiment config and store one Profile per cell',
  usage: 'pbh run CONFIG [--db PATH] [--resume] [--only KEY[,KEY...]] [--mlperf] [--tdp-w WATTS]',
  help: `
Runs every (model x engine x batch size) cell of CONFIG (YAML or JSON; see \`pbh schema\`) through the unified loop:
compile outside the tracker, warmup, repeated sessions, scoring outside the timed region. Each cell's Profile is
written to the database in its own transaction as soon as it is measured; failures become failed Profiles.

Options:
  --db PATH      database file (default ${DEFAULT_DB})
  --resume       skip cells already stored with status ok in this database, unless the cell changed since: its
                 configuration, the model file's or the dataset's contents, or the engine's version (those run again,
                 and the summary says why)
  --only KEYS    run only these cell keys (every Profile's reproduce command uses this)
  --mlperf       judge every scenario by MLPerf's rules (600 s minimum duration, MLPerf's query and sample counts)
  --tdp-w WATTS  the CPU package's TDP for the energy estimate where no RAPL counter reads (sets energy.tdp_w)

Exit code 0 when every cell is ok or skipped, 1 when any failed, timed out, gave invalid output or could not be
stored (it is then kept as JSON beside the database), 130 on Ctrl-C, 143 on SIGTERM (the cell in flight is recorded).`,
  options: { db: { type: 'string' }, resume: { type: 'boolean' }, only: { type: 'string' }, mlperf: { type: 'boolean' }, 'tdp-w': { type: 'string' } },
  async run({ values, positionals }) {
    const file = positionals[0];
    if (!file) throw new UsageError('pbh run needs a config file, e.g. pbh run configs/digits.yaml');
    const loaded = await loadExperiment(file);
    // A bundled config on a fresh clone: say which generator makes its files, not one failed Profile per cell.
    const missing = missingGeneratedAssets(loaded);
    if (missing.length > 0) throw new UsageError(missingAssetsMessage(loaded.file, missing));
    // MLPerf's rules change what a cell measures (its minimums), so they are part of every cell key.
    if (values.mlperf === true) loaded.experiment.mlperf_rules = true;
    const tdp = values['tdp-w'];
    if (typeof tdp === 'string') {
      const watts = Number(tdp);
      if (!Number.isFinite(watts) || watts <= 0 || watts > 10_000) throw new UsageError(`--tdp-w ${tdp}: give the CPU package's TDP in watts, a number above 0 and at most 10000 (e.g. --tdp-w 270)`);
      loaded.experiment.energy.tdp_w = watts;
    }
    const only = typeof values.only === 'string' ? values.only.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
    if (only) {
      // A key that names no cell would run nothing and exit 0: a Slurm task whose config drifted would pass quietly.
      const keys = new Set(expandCells(loaded.experiment).map((c) => c.key));
      const unknown = only.length === 0 ? [values.only as string] : only.filter((k) => !keys.has(k));
      if (unknown.length > 0) {
        throw new UsageError(
          `--only ${unknown.join(',')}: no cell of ${file} has ${unknown.length === 1 ? 'that key' : 'those keys'} (it has ${keys.size} cells). The config changed since the key was printed, or the key is mistyped: run without --only, or take a current key from the Profile's reproduce command.`,
        );
      }
    }
    const dbPath = (values.db as string | undefined) ?? DEFAULT_DB;
    const prefix = [
      'npx', 'pbh', 'run', shellQuote(path.relative(process.cwd(), path.resolve(file)) || file), '--db', shellQuote(dbPath),
      ...(values.mlperf === true ? ['--mlperf'] : []),
      ...(typeof tdp === 'string' ? ['--tdp-w', shellQuote(tdp)] : []),
    ].join(' ');
    const result = await runSweep({
      loaded,
      dbPath,
      resume: values.resume === true,
      only,
      progress: createProgress(),
      commandPrefix: prefix,
    });
    if (result.profiles.length > 0) process.stdout.write(`\n${formatSummary(result.profiles)}\n`);
    const counts = result.profiles.reduce<Record<string, number>>((acc, p) => ({ ...acc, [p.status]: (acc[p.status] ?? 0) + 1 }), {});
    const parts = Object.entries(counts).map(([k, v]) => `${v} ${k}`);
    if (result.skippedByResume) parts.push(`${result.skippedByResume} already stored (--resume)`);
    if (result.rerunByResume.length) {
      parts.push(`${result.rerunByResume.length} stored but changed, so run again (--resume)`);
      process.stdout.write(`\nrun again by --resume, each with why:\n${result.rerunByResume.map((r) => `  ${terminalSafe(r)}`).join('\n')}\n`);
    }
    process.stdout.write(`\nrun ${result.runId}: ${parts.join(', ') || 'nothing to do'}; stored in ${dbPath}\n`);
    if (result.unstored.length) {
      process.stdout.write(`${result.unstored.length} Profile(s) could not be stored and were kept as JSON: ${result.unstored.map((u) => u.file).join(', ')}\n`);
    }
    if (result.closeError) process.stderr.write(`pbh: ${terminalSafe(result.closeError)}\n`);
    if (result.interrupted) return result.interrupted === 'SIGTERM' ? EXIT.terminated : EXIT.interrupted;
    if (result.closeError) return EXIT.store;
    const bad = result.unstored.length > 0 || result.profiles.some((p) => p.status === 'failed' || p.status === 'timeout' || p.status === 'invalid_output');
    return bad ? EXIT.partial : EXIT.ok;
  },
};
