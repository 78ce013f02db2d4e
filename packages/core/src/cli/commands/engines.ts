import type { Availability, EngineProcess } from '../../contracts/engine.js';
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

export async function probeEngines(): Promise<{ engines: EngineReport[]; failures: { pkg: string; error: string }[] }> {
  const registry = await createRegistry();
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
  usage: 'pbh engines [--json]',
  help: `
Every installed engine package is probed. An unavailable engine says why and the exact command that fixes it.
Exit code 1 when any installed engine is unavailable.

Options:
  --json   machine-readable output`,
  options: { json: { type: 'boolean' } },
  async run({ values }) {
    const { engines, failures } = await probeEngines();
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
