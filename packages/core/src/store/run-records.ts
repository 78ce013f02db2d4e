import { z } from 'zod';
import { SystemInfoSchema } from '../contracts/profile.js';
import { StoreSchemaError } from './errors.js';
import { systemId } from './profile-rows.js';
import { RunEndSchema, RunStartSchema, type RunStart } from './run-start.js';
import type { ProfileStore } from './store.js';

/** A stored run as beginRun recorded it, with the moment finishRun stamped and how it ended (both null while it runs). */
export const RunRecordSchema = RunStartSchema.extend({ finished_at: z.string().nullable(), ended: RunEndSchema.nullable() });
export type RunRecord = z.infer<typeof RunRecordSchema>;

const RunRowSchema = z.object({
  run_id: z.string(),
  name: z.string(),
  started_at: z.date().transform((d) => d.toISOString()),
  finished_at: z.date().transform((d) => d.toISOString()).nullable(),
  ended: RunEndSchema.nullable(),
  config: z.string(),
  command: z.string(),
  system_id: z.string(),
});

/**
 * Every run of a store with the system it ran on, rebuilt as beginRun received them. The system is read back from
 * its row and checked against its id (the sha256 of the SystemInfo it was made from), so a column this reader does
 * not know yet is an error here rather than a node's system silently changed on its way to another file.
 */
export async function readRunRecords(store: ProfileStore): Promise<RunRecord[]> {
  return store.withConnection(async (connection) => {
    const runs = await connection.runAndReadAll(
      'SELECT run_id, name, started_at, finished_at, ended, config::VARCHAR AS config, command, system_id FROM runs ORDER BY started_at, run_id',
    );
    // BIGINT comes back as bigint and JSON as text: both cast in SQL, the JSON parsed below.
    const systems = await connection.runAndReadAll(
      'SELECT * REPLACE (memory_bytes::DOUBLE AS memory_bytes, gpus::VARCHAR AS gpus) FROM systems',
    );
    const byId = new Map<string, z.infer<typeof SystemInfoSchema>>();
    for (const row of systems.getRowObjectsJS()) {
      const id = String(row.system_id);
      const parsed = SystemInfoSchema.safeParse({ ...row, gpus: JSON.parse(String(row.gpus)) as unknown });
      if (!parsed.success || systemId(parsed.data) !== id) {
        throw new StoreSchemaError(
          `System ${id} in ${store.file} does not read back as the SystemInfo it was stored from ` +
            `(${parsed.success ? 'its id differs' : z.prettifyError(parsed.error)}): it was written by another pbh version.`,
        );
      }
      byId.set(id, parsed.data);
    }
    return runs.getRowObjectsJS().map((raw) => {
      const row = RunRowSchema.parse(raw);
      const system = byId.get(row.system_id);
      if (system === undefined) throw new StoreSchemaError(`Run ${row.run_id} in ${store.file} names system ${row.system_id}, which is not in its systems table.`);
      const start: RunStart = {
        run_id: row.run_id,
        name: row.name,
        started_at: row.started_at,
        config: z.record(z.string(), z.unknown()).parse(JSON.parse(row.config)),
        command: row.command,
        system,
      };
      return { ...start, finished_at: row.finished_at, ended: row.ended };
    });
  });
}
