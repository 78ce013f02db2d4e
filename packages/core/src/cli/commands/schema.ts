import { writeFile } from 'node:fs/promises';
import { experimentJsonSchema } from '../../config/load.js';
import { EXIT, type Command } from '../command.js';

export const schemaCommand: Command = {
  name: 'schema',
  summary: 'print the JSON Schema of experiment configs (for editor autocompletion)',
  usage: 'pbh schema [--out FILE]',
  help: `
Generated from the zod schema PBH validates configs with, so it is never out of date.
Point a config at it with a first line \`$schema: ./experiment.schema.json\` (YAML) or "$schema" (JSON).

Options:
  --out FILE   write to FILE instead of stdout`,
  options: { out: { type: 'string' } },
  async run({ values }) {
    const text = `${JSON.stringify(experimentJsonSchema(), null, 2)}\n`;
    if (typeof values.out === 'string') await writeFile(values.out, text);
    else process.stdout.write(text);
    return EXIT.ok;
  },
};
