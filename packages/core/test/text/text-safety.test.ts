import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { neutraliseFormula, neutraliseFormulaSql } from '../../src/text/csv-formula.js';
import { terminalSafe } from '../../src/text/terminal.js';

describe('terminalSafe', () => {
  it('shows ESC, BEL, CR, LF, TAB, DEL, C1 and bidi controls as escapes', () => {
    expect(terminalSafe('a\u001b[31mred\u001b]8;;http://x\u0007link')).toBe('a\\x1b[31mred\\x1b]8;;http://x\\x07link');
    expect(terminalSafe('one\ntwo\rthree\tfour')).toBe('one\\ntwo\\rthree\\tfour');
    expect(terminalSafe('\u0000\u007f\u009b\u202e\u2066\u2028')).toBe('\\x00\\x7f\\x9b\\u202e\\u2066\\u2028');
  });

  it('leaves printable text alone, non-ASCII letters and emoji included', () => {
    const text = 'résumé ResNet-50 «x» 模型 🙂 \\x1b (a literal backslash)';
    expect(terminalSafe(text)).toBe(text);
  });

  it('keeps line breaks when asked, escaping every other control', () => {
    expect(terminalSafe('line 1\nline\u001b[2J 2\r', { keepNewlines: true })).toBe('line 1\nline\\x1b[2J 2\\r');
  });
});

describe('neutraliseFormula', () => {
  it('prefixes text a spreadsheet would evaluate with a single quote (OWASP: = + - @ tab CR)', () => {
    for (const cell of ['=HYPERLINK("http://x","c")', '+cmd|calc', '-2+3', '@SUM(A1)', '\tx', '\rx', '-', '+']) {
      expect(neutraliseFormula(cell), JSON.stringify(cell)).toBe(`'${cell}`);
    }
  });

  const CELLS = ['=HYPERLINK("http://x","c")', '+cmd|calc', '-2+3', '@SUM(A1)', '\tx', '\rx', '-', '-5', '+1', '-1.5e-3', '-.5', 'onnxruntime', "'q", '', 'a=b'];

  it('keeps numbers, negative and signed ones included, and ordinary text', () => {
    for (const cell of ['-5', '+1', '-1.5', '-1.5e-3', '-.5', '-9223372036854775808', '3', 'onnxruntime', "'quoted", '', 'a=b']) {
      expect(neutraliseFormula(cell), JSON.stringify(cell)).toBe(cell);
    }
  });

  it('has a DuckDB SQL form (for COPY ... TO csv) that gives the same cells', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      await connection.run('CREATE TABLE cells (i INTEGER, c VARCHAR)');
      for (const [i, cell] of CELLS.entries()) await connection.run('INSERT INTO cells VALUES ($1, $2)', [i, cell]);
      const reader = await connection.runAndReadAll(`SELECT ${neutraliseFormulaSql('"c"')} FROM cells ORDER BY i`);
      expect(reader.getRows().map((row) => row[0])).toEqual(CELLS.map(neutraliseFormula));
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
