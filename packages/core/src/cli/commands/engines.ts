import type { Availability, EngineProcess } from '../../contracts/engine.js';
import { loadExperiment } from '../../config/load.js';
import { createRegistry } from '../../plugins/registry.js';
import { EXIT, type Command } from '../command.js';

export interface EngineReport {
  name: string;
  /** Where it was probed: one report per process the engine can run in. */
  process: EngineProcess;
  /** The name, with the process when the engine can run in more than one (e.g. "onnxruntime (harness)"). */
  label: string;
  description: string;
  availability: Availability;
}

/** Every installed engine, plus the plugins a config lists (resolved against its folder), probed where each runs. */
export async function probeEngines(plugins: string[] = [], baseDir = process.cwd()): Promise<{ engines: EngineReport[]; failures: { pkg: string; error: string }[] }> {
  const registry = await createRegistry(plugins, baseDir);
  const engines = await Promise.all(
    [...registry.engines.values()].flatMap((e) =>
      e.processes.map(async (process) => ({
        name: e.name,
        process,
        label: e.processes.length > 1 ? `${e.name} (${process})` : e.name,
        description: e.description,
        availability: await e.probe(process).catch((err: unknown): Availability => ({ available: false, reason: (err as Error).message, fix: 'npx pbh doctor' })),
      })),
    ),
  );
  return { engines, failures: registry.failures };
}

export const enginesCommand: Command = {
  name: 'engines',
  summary: 'list installed engines, available or not, with versions, devices and fixes',
  usage: 'pbh engines [--config FILE] [--json]',
  help: `
Every installed engine package is probed. An unavailable engine says why and the exact command that fixes it.
Exit code 1 when any installed engine is unavailable.

Options:
  --config FILE   also the engines of the plugins this config lists under plugins: (a folder or package with a
                  pbh-engine.json, or a plugin module)
  --json          machine-readable output`,
  options: { json: { type: 'boolean' }, config: { type: 'string' } },
  async run({ values }) {
    const loaded = typeof values.config === 'string' ? await loadExperiment(values.config) : undefined;
    const { engines, failures } = await probeEngines(loaded?.experiment.plugins ?? [], loaded?.dir);
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ engines, failures }, null, 2)}\n`);
    } else {
      for (const e of engines) {
        const a = e.availability;
        if (a.available) {
          process.stdout.write(`${e.label.padEnd(22)} available    ${a.version.padEnd(12)} devices: ${a.devices.join(', ')}  (${e.description})\n`);
        } else {
          process.stdout.write(`${e.label.padEnd(22)} unavailable  ${a.reason}\n${' '.repeat(23)}fix: ${a.fix}\n`);
        }
      }
      for (const f of failures) process.stdout.write(`${f.pkg}: failed to load: ${f.error}\n`);
    }
    return engines.every((e) => e.availability.available) && failures.length === 0 ? EXIT.ok : EXIT.partial;
  },
};
