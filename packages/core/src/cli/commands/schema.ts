import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { experimentJsonSchema } from '../../config/load.js';
import { ManifestSchema } from '../../worker/manifest.js';
import { EXIT, type Command } from '../command.js';

export const schemaCommand: Command = {
  name: 'schema',
  summary: 'print the JSON Schema of experiment configs, or of engine manifests (for editor autocompletion)',
  usage: 'pbh schema [--manifest] [--out FILE]',
  help: `
Generated from the zod schemas PBH validates with, so they are never out of date.
Point a config at it with a first line \`$schema: ./experiment.schema.json\` (YAML) or "$schema" (JSON); an engine's
pbh-engine.json at schema/engine-manifest.schema.json (docs/adding-an-engine.md).

Options:
  --manifest   the schema of an engine manifest (pbh-engine.json) instead of a config
  --out FILE   write to FILE instead of stdout`,
  options: { out: { type: 'string' }, manifest: { type: 'boolean' } },
  async run({ values }) {
    const schema = values.manifest === true ? z.toJSONSchema(ManifestSchema, { io: 'input', unrepresentable: 'any' }) : experimentJsonSchema();
    const text = `${JSON.stringify(schema, null, 2)}\n`;
    if (typeof values.out === 'string') await writeFile(values.out, text);
    else process.stdout.write(text);
    return EXIT.ok;
  },
};
