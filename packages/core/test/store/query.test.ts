import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryError, formatCsv, formatJson, formatTable, openStore, runQuery, type ProfileStore } from '../../src/store/index.js';
import { makeProfile, runStart, tempDir } from './profile-fixture.js';

let reader: ProfileStore;
let cleanup: () => void;

beforeAll(async () => {
  const temp = tempDir();
  cleanup = temp.cleanup;
  const file = join(temp.dir, 'pbh.duckdb');
  const writer = await openStore(file);
  await writer.beginRun(runStart('run-1'));
  await writer.writeProfile(makeProfile({ profileId: 'ort', runId: 'run-1', engine: 'onnxruntime', batchesPerSession: 10 }));
  await writer.writeProfile(makeProfile({ profileId: 'ov', runId: 'run-1', engine: 'openvino', batchesPerSession: 10, meanNs: 100_000 }));
  await writer.close();
  reader = await openStore(file, { readOnly: true });
});
afterAll(async () => {
  await reader.close();
  cleanup();
});

describe('runQuery', () => {
  it('converts BIGINT to number when exact and to a string otherwise, dates and timestamps to ISO', async () => {
    const result = await runQuery(
      reader,
      `SELECT 42::BIGINT AS small, 9007199254740993::BIGINT AS big, DATE '2026-03-01' AS day,
              TIMESTAMPTZ '2026-03-01 10:00:00.5+00' AS at, [1, 2]::BIGINT[] AS list, {'k': 3::HUGEINT} AS s,
              NULL AS nothing, 1.5::DOUBLE AS x, true AS flag`,
    );
    expect(result.columns).toEqual(['small', 'big', 'day', 'at', 'list', 's', 'nothing', 'x', 'flag']);
    expect(result.types[0]).toBe('BIGINT');
    expect(result.rows).toEqual([[42, '9007199254740993', '2026-03-01', '2026-03-01T10:00:00.500Z', [1, 2], { k: 3 }, null, 1.5, true]]);
  });

  it('reads the views', async () => {
    const result = await runQuery(reader, 'SELECT engine, count(*) AS n FROM leaderboard GROUP BY engine ORDER BY engine');
    expect(result.rows).toEqual([
      ['onnxruntime', 1],
      ['openvino', 1],
    ]);
  });

  it('wraps DuckDB errors: a write says the store is read-only, bad SQL lists the tables', async () => {
    await expect(runQuery(reader, `DELETE FROM profiles`)).rejects.toThrow(
      /tries to change .*pbh\.duckdb, which queries open read-only \(DuckDB: .*read-only/s,
    );
    await expect(runQuery(reader, `CREATE TABLE t (x INTEGER)`)).rejects.toBeInstanceOf(QueryError);
    await expect(runQuery(reader, `SELECT * FROM nope`)).rejects.toThrow(/Query failed on .*nope.*views leaderboard, comparisons/s);
  });

  it('refuses a store opened read-write', async () => {
    const temp = tempDir();
    const writer = await openStore(join(temp.dir, 'w.duckdb'));
    await expect(runQuery(writer, 'SELECT 1')).rejects.toThrow(/reads only: open .* readOnly: true/);
    await writer.close();
    temp.cleanup();
  });
});

describe('formats', () => {
  const result = {
    columns: ['engine', 'throughput_sps', 'note', 'nested'],
    types: ['VARCHAR', 'DOUBLE', 'VARCHAR', 'INTEGER[]'],
    rows: [
      ['onnxruntime', 36363.636363, 'says "hi", twice', [1, 2]],
      ['tvm', 512, null, null],
    ],
  };

  it('formatTable aligns columns, right-aligns numbers and counts rows', () => {
    expect(formatTable(result)).toBe(
      [
        'engine      | throughput_sps | note             | nested',
        '------------+----------------+------------------+-------',
        'onnxruntime |        36363.6 | says "hi", twice | [1,2]',
        'tvm         |            512 | NULL             | NULL',
        '(2 rows)',
      ].join('\n'),
    );
  });

  it('formatTable clips long cells', () => {
    const long = { columns: ['s'], types: ['VARCHAR'], rows: [['x'.repeat(100)]] };
    const line = formatTable(long, { maxCellWidth: 10 }).split('\n')[2];
    expect(line).toBe(`${'x'.repeat(9)}…`);
  });

  it('formatCsv quotes per RFC 4180 and keeps every digit', () => {
    expect(formatCsv(result)).toBe(
      'engine,throughput_sps,note,nested\r\nonnxruntime,36363.636363,"says ""hi"", twice","[1,2]"\r\ntvm,512,,\r\n',
    );
  });

  it('formatCsv neutralises text cells that start a formula, never numbers', () => {
    const hostile = {
      columns: ['name', 'n', 'big', 's'],
      types: ['VARCHAR', 'INTEGER', 'HUGEINT', 'VARCHAR'],
      rows: [['=HYPERLINK("http://x")', -5, '-170141183460469231731687303715884105728', '@SUM(A1)']],
    };
    expect(formatCsv(hostile).split('\r\n')[1]).toBe(`"'=HYPERLINK(""http://x"")",-5,-170141183460469231731687303715884105728,'@SUM(A1)`);
  });

  it('formatTable shows control characters in cells and names as escapes, measured as shown', () => {
    const hostile = { columns: ['n\u001bame'], types: ['VARCHAR'], rows: [['a\u001b[31mb\nc']] };
    expect(formatTable(hostile).split('\n')).toEqual(['n\\x1bame', '-------------', 'a\\x1b[31mb\\nc', '(1 row)']);
  });

  it('formatJson writes one object per row', () => {
    expect(JSON.parse(formatJson(result))).toEqual([
      { engine: 'onnxruntime', throughput_sps: 36363.636363, note: 'says "hi", twice', nested: [1, 2] },
      { engine: 'tvm', throughput_sps: 512, note: null, nested: null },
    ]);
  });
});
