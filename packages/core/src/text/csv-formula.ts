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
