/**
 * The SQL console: duckdb-wasm loaded from this site (duckdb/, the exception-handling build only) when the first query
 * is run, not when the page opens (its wasm is most of what the site weighs), attaching the published database file
 * (data/pbh.duckdb) over HTTP range requests: a query reads the blocks it needs, not the file. Extension autoloading
 * is off: this build would fetch extensions from DuckDB's CDN, and the site must work offline. Results are written
 * with textContent, so nothing a query returns can become markup.
 */
import * as duckdb from '@duckdb/duckdb-wasm';

const MAX_ROWS = 1000;
/** Longer values show their start and a button to see the rest: a JSON column must not make a row 900 px tall. */
const SHORT_CHARS = 80;

const form = document.querySelector<HTMLFormElement>('#sql-form');
const input = document.querySelector<HTMLTextAreaElement>('#sql-input');
const runButton = document.querySelector<HTMLButtonElement>('#sql-run');
const status = document.querySelector<HTMLElement>('#sql-status');
const output = document.querySelector<HTMLElement>('#sql-result');

function setStatus(text: string, error = false): void {
  if (!status) return;
  status.textContent = text;
  status.classList.toggle('error', error);
}

/** Arrow hands dates and timestamps over as epoch milliseconds: shown as ISO 8601, UTC, as the store keeps them. */
function isTemporal(type: string): boolean {
  return /^(Date|Timestamp)/i.test(type);
}

/** A float as its shortest form at 12 significant digits: 0.20111489999999943 reads 0.2011149, what it was stored as. */
const FLOAT = /^Float/i;

function cellText(value: unknown, type: string): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' && FLOAT.test(type) && Number.isFinite(value)) return String(Number(value.toPrecision(12)));
  if (value instanceof Date) return value.toISOString();
  if (isTemporal(type) && (typeof value === 'number' || typeof value === 'bigint')) {
    const ms = Number(value);
    return Number.isFinite(ms) ? new Date(ms).toISOString() : String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'object') {
    const json = (value as { toJSON?: () => unknown }).toJSON?.() ?? value;
    return JSON.stringify(json, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  }
  return String(value);
}

/** A cell: short values whole; long ones cut at SHORT_CHARS with a button that shows the whole value and hides it again. */
function fillCell(cell: HTMLTableCellElement, text: string): void {
  if (text.length <= SHORT_CHARS) {
    cell.textContent = text;
    return;
  }
  const shown = document.createElement('span');
  shown.textContent = `${text.slice(0, SHORT_CHARS)}…`;
  const toggle = document.createElement('button');
  toggle.type = 'button';
  toggle.className = 'expand';
  toggle.textContent = `all ${text.length.toLocaleString('en-US')} chars`;
  toggle.addEventListener('click', () => {
    const open = cell.classList.toggle('open');
    shown.textContent = open ? text : `${text.slice(0, SHORT_CHARS)}…`;
    toggle.textContent = open ? 'less' : `all ${text.length.toLocaleString('en-US')} chars`;
  });
  cell.append(shown, ' ', toggle);
}

function renderTable(columns: { name: string; type: string }[], rows: unknown[][]): HTMLTableElement {
  const table = document.createElement('table');
  table.className = 'sql';
  const head = table.createTHead().insertRow();
  for (const { name, type } of columns) {
    const th = document.createElement('th');
    th.textContent = name;
    th.title = type;
    head.append(th);
  }
  const body = table.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    row.forEach((value, i) => fillCell(tr.insertCell(), cellText(value, columns[i]?.type ?? '')));
  }
  return table;
}

async function openDatabase(config: DOMStringMap): Promise<duckdb.AsyncDuckDBConnection> {
  const base = new URL(config.duckdb ?? 'duckdb/', window.location.href);
  const worker = new Worker(new URL('duckdb-browser-eh.worker.js', base).href);
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
  await db.instantiate(new URL('duckdb-eh.wasm', base).href);
  // Range reads only: duckdb-wasm would otherwise fetch the whole file before the first query (it does unless told not to).
  await db.open({
    query: { castBigIntToDouble: true, castTimestampToDate: true },
    filesystem: { forceFullHTTPReads: false, allowFullHTTPReads: false, reliableHeadRequests: true },
  });
  const connection = await db.connect();
  await connection.query('SET autoload_known_extensions = false');
  await connection.query('SET autoinstall_known_extensions = false');
  const file = new URL(config.database ?? 'data/pbh.duckdb', window.location.href);
  await db.registerFileURL('pbh.duckdb', file.href, duckdb.DuckDBDataProtocol.HTTP, false);
  await connection.query("ATTACH 'pbh.duckdb' AS pbh (READ_ONLY)");
  await connection.query('USE pbh');
  return connection;
}

/** Null where this browser cannot run the console, with the reason already on the page. */
async function startDatabase(config: DOMStringMap): Promise<duckdb.AsyncDuckDBConnection | null> {
  if (!(await duckdb.getPlatformFeatures()).wasmExceptions) {
    setStatus('This browser has no WebAssembly exception handling, which the console needs (any browser from 2022 on has it). The Parquet files below work with any DuckDB.', true);
    return null;
  }
  try {
    return await openDatabase(config);
  } catch (error) {
    setStatus(`Could not start DuckDB in this browser: ${error instanceof Error ? error.message : String(error)}. The Parquet files below still work with any DuckDB.`, true);
    return null;
  }
}

const plural = (n: number, one: string, many: string): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

function main(): void {
  if (!form || !input || !runButton || !output) return;
  // Started by the first query, then kept: every later query uses the same connection.
  let started: Promise<duckdb.AsyncDuckDBConnection | null> | null = null;
  setStatus(`Ready: tables ${(form.dataset.tables ?? '').split(',').join(', ')}. DuckDB loads with the first query.`);
  runButton.disabled = false;
  // sql.html#query=<SQL>: a page's link to its own rows (a Profile's raw samples) runs that query on arrival.
  const linked = /^#query=(.+)$/s.exec(window.location.hash)?.[1];
  if (linked) input.value = decodeURIComponent(linked);
  for (const example of document.querySelectorAll<HTMLButtonElement>('button.sql-example')) {
    example.addEventListener('click', () => {
      input.value = example.dataset.sql ?? '';
      form.requestSubmit();
    });
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      runButton.disabled = true;
      if (started === null) setStatus('Loading DuckDB…');
      started ??= startDatabase(form.dataset);
      const connection = await started;
      if (connection === null) return;
      setStatus('Running…');
      const began = performance.now();
      try {
        const result = await connection.query(input.value);
        const columns = result.schema.fields.map((f) => ({ name: f.name, type: String(f.type) }));
        const rows = result.toArray().slice(0, MAX_ROWS).map((row) => columns.map((c) => (row as Record<string, unknown>)[c.name]));
        output.replaceChildren(renderTable(columns, rows));
        const shown = result.numRows > MAX_ROWS ? ` (first ${MAX_ROWS} shown)` : '';
        setStatus(`${plural(result.numRows, 'row', 'rows')}${shown} in ${Math.round(performance.now() - began)} ms.`);
      } catch (error) {
        output.replaceChildren();
        setStatus(`Query failed: ${error instanceof Error ? error.message : String(error)}`, true);
      } finally {
        runButton.disabled = false;
      }
    })();
  });
  if (linked) form.requestSubmit();
}

main();
