// Fault suite, data a cell is fed (issue 41, defects 4 and 6): a CSV whose cells are empty or not decimal, and zeros
// for an input declared too large to allocate. Each is one failed Profile naming the line and column or the input,
// exit 1, nothing written outside the database. (Devices and FIFOs as dataset paths are bad configs in faults.test.ts.)
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeConfig } from '../helpers.js';
import { ROOT, suiteData, suiteModel } from '../suite.js';
import { exitOf, inSandbox, oneCell, printTable, record, sandbox, storedProfiles } from './sandbox.js';

afterAll(() => printTable('PBH fault suite: data a cell is fed'));

/** The bundled digits CSV's header and first 32 rows, with cell [line, column] (1-based lines, 0-based columns) set. */
function digitsCsv(file: string, line: number, column: number, value: string): string {
  const lines = readFileSync(suiteData('digits.csv'), 'utf8').split('\n').slice(0, 33);
  const cells = lines[line - 1]!.split(',');
  cells[column < 0 ? cells.length + column : column] = value;
  lines[line - 1] = cells.join(',');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** [case, line, column (negative from the end: -1 is the label), the cell's text, what the Profile's error says]. */
const CSV_CELLS: [string, number, number, string, RegExp][] = [
  ['an empty feature cell', 6, 3, '', /gaps\.csv: line 6, column "p3": the cell is empty/],
  ['an empty label', 10, -1, '', /gaps\.csv: line 10: the label is empty/],
  ['a hexadecimal cell (0x10)', 13, 7, '0x10', /gaps\.csv: line 13, column "p7": "0x10" is not a decimal number/],
];

describe('CSV cells that are no numbers are refused, not read as 0 or 16', () => {
  for (const [name, line, column, value, error] of CSV_CELLS) {
    it(`${name}: a failed Profile naming line and column, exit 1`, async () => {
      const s = await sandbox(`csv ${name}`, (p) =>
        writeConfig(p.work, 'c.yaml', {
          ...oneCell(),
          dataset: { kind: 'csv', path: digitsCsv(path.join(p.work, 'gaps.csv'), line, column, value), label_column: 'label' },
          models: [{ name: 'digits_mlp', path: suiteModel('digits_mlp'), weights: 'trained' }],
        }),
      );
      const r = await inSandbox(s, ['run', path.join(s.work, 'c.yaml'), '--db', s.db]);
      const found = await storedProfiles(s);
      const row = record(s, `CSV: ${name}`, exitOf(r), 1, found.length);
      expect(r.code, r.stderr).toBe(1);
      expect(found.map((p) => p.status)).toEqual(['failed']);
      expect(found[0]!.error).toMatch(error);
      expect(row.changed).toEqual([]);
      expect(row.tempLeft).toBe(0);
    });
  }
});

describe('zeros for an input too large to allocate', () => {
  it('a failed Profile naming the input and its size, before any allocation, exit 1', async () => {
    const s = await sandbox('zeros too large', (p) => {
      const model = path.join(p.work, 'unallocatable.onnx');
      execFileSync(path.join(ROOT, '.venv', 'bin', 'python'), [path.join(ROOT, 'test', 'fixtures', 'make_unallocatable.py'), model]);
      return writeConfig(p.work, 'c.yaml', {
        ...oneCell(),
        models: [{ name: 'unallocatable', path: model, inputs: { input: 'input', cache: { zeros: true } } }],
      });
    });
    const r = await inSandbox(s, ['run', path.join(s.work, 'c.yaml'), '--db', s.db]);
    const found = await storedProfiles(s);
    const row = record(s, 'zeros of [N, 2^31] float32 (8 GiB a sample)', exitOf(r), 1, found.length);
    expect(r.code, r.stderr).toBe(1);
    expect(found.map((p) => p.status)).toEqual(['failed']);
    expect(found[0]!.error).toMatch(/models\[unallocatable\]\.inputs\.cache: zeros of \[batch, 2147483648\] float32 for input "cache" are 8\.0 GiB a sample/);
    expect(r.stderr).not.toMatch(/Array buffer allocation failed/);
    expect(row.changed).toEqual([]);
    expect(row.tempLeft).toBe(0);
  });
});
