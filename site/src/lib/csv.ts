import { neutraliseFormula } from '@pbh/core';

/** A table the site publishes: the same rows become CSV and JSON downloads. */
export interface DataTable {
  columns: string[];
  rows: Record<string, unknown>[];
}

function csvText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return neutraliseFormula(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * RFC 4180: header row, CRLF line ends, quoted fields where needed; null is empty, nested values are JSON. Text a
 * spreadsheet would run as a formula (a model named =HYPERLINK(...)) starts with ' (core's neutraliseFormula);
 * numbers, negative ones included, are written as they are.
 */
export function toCsv(table: DataTable): string {
  const lines = [table.columns.map((column) => csvField(neutraliseFormula(column))).join(',')];
  for (const row of table.rows) lines.push(table.columns.map((c) => csvField(csvText(row[c]))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** One object per row with exactly the table's columns, in order. */
export function toJson(table: DataTable): string {
  const objects = table.rows.map((row) => Object.fromEntries(table.columns.map((c) => [c, row[c] ?? null])));
  return `${JSON.stringify(objects)}\n`;
}
