/**
 * The SQL console: duckdb-wasm loaded from this site (duckdb/), attaching the published database
 * file (data/pbh.duckdb) over HTTP range requests. Extension autoloading is off: this build would
 * fetch extensions from DuckDB's CDN, and the site must work offline. Results are written with
 * textContent, so nothing a query returns can become markup.
 */
import * as duckdb from '@duckdb/duckdb-wasm';

const MAX_ROWS = 1000;

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

function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'object') {
    const json = (value as { toJSON?: () => unknown }).toJSON?.() ?? value;
    return JSON.stringify(json, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  }
  return String(value);
}

function renderTable(columns: string[], rows: unknown[][]): HTMLTableElement {
  const table = document.createElement('table');
  const head = table.createTHead().insertRow();
  for (const name of columns) {
    const th = document.createElement('th');
    th.textContent = name;
    head.append(th);
  }
  const body = table.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const value of row) tr.insertCell().textContent = cellText(value);
  }
  return table;
}

async function openDatabase(config: DOMStringMap): Promise<duckdb.AsyncDuckDBConnection> {
  const base = new URL(config.duckdb ?? 'duckdb/', window.location.href);
  const bundles: duckdb.DuckDBBundles = {
    mvp: { mainModule: new URL('duckdb-mvp.wasm', base).href, mainWorker: new URL('duckdb-browser-mvp.worker.js', base).href },
    eh: { mainModule: new URL('duckdb-eh.wasm', base).href, mainWorker: new URL('duckdb-browser-eh.worker.js', base).href },
  };
  const bundle = await duckdb.selectBundle(bundles);
  if (!bundle.mainWorker) throw new Error('duckdb-wasm found no worker script for this browser.');
  const worker = new Worker(bundle.mainWorker);
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
  await db.instantiate(bundle.mainModule, bundle.pthreadWorker);
  await db.open({ query: { castBigIntToDouble: true, castTimestampToDate: true } });
  const connection = await db.connect();
  await connection.query('SET autoload_known_extensions = false');
  await connection.query('SET autoinstall_known_extensions = false');
  const file = new URL(config.database ?? 'data/pbh.duckdb', window.location.href);
  await db.registerFileURL('pbh.duckdb', file.href, duckdb.DuckDBDataProtocol.HTTP, false);
  await connection.query("ATTACH 'pbh.duckdb' AS pbh (READ_ONLY)");
  await connection.query('USE pbh');
  return connection;
}

async function main(): Promise<void> {
  if (!form || !input || !runButton || !output) return;
  let connection: duckdb.AsyncDuckDBConnection;
  try {
    connection = await openDatabase(form.dataset);
  } catch (error) {
    setStatus(`Could not start DuckDB in this browser: ${error instanceof Error ? error.message : String(error)}. The Parquet files below still work with any DuckDB.`, true);
    return;
  }
  setStatus(`Ready: tables ${(form.dataset.tables ?? '').split(',').join(', ')}.`);
  runButton.disabled = false;
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
      setStatus('Running…');
      const started = performance.now();
      try {
        const result = await connection.query(input.value);
        const columns = result.schema.fields.map((f) => f.name);
        const rows = result.toArray().slice(0, MAX_ROWS).map((row) => columns.map((c) => (row as Record<string, unknown>)[c]));
        output.replaceChildren(renderTable(columns, rows));
        const shown = result.numRows > MAX_ROWS ? ` (first ${MAX_ROWS} shown)` : '';
        setStatus(`${result.numRows} rows${shown} in ${Math.round(performance.now() - started)} ms.`);
      } catch (error) {
        output.replaceChildren();
        setStatus(`Query failed: ${error instanceof Error ? error.message : String(error)}`, true);
      } finally {
        runButton.disabled = false;
      }
    })();
  });
}

void main();
