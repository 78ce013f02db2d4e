/** Leading characters that make Excel, LibreOffice Calc and Google Sheets read a cell as a formula (OWASP CSV Injection). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain number such as -5 or +1.5e3: a spreadsheet reads it as that number, never as a formula. */
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A text cell a spreadsheet would evaluate (=HYPERLINK(...), +cmd|..., @SUM(...), -2+3) gets a leading single quote,
 * as OWASP recommends, so it opens as the text it is. Numbers are data, not formulas: a negative number (also one
 * carried as text, e.g. a BIGINT past 2^53) is left as it is. Apply it to string cells only, before CSV quoting.
 */
export function neutraliseFormula(text: string): string {
  return FORMULA_START.test(text) && !NUMBER.test(text) ? `'${text}` : text;
}

/**
 * neutraliseFormula as a DuckDB SQL expression over a VARCHAR column, for CSV that DuckDB's COPY writes (pbh export):
 * the same two patterns, which DuckDB's RE2 reads as JavaScript does. `column` is a quoted SQL identifier.
 */
export function neutraliseFormulaSql(column: string): string {
  const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;
  return `CASE WHEN regexp_matches(${column}, ${literal(FORMULA_START.source)}) AND NOT regexp_matches(${column}, ${literal(NUMBER.source)}) THEN '''' || ${column} ELSE ${column} END`;
}
