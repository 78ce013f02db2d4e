/**
 * Sorting and filtering for tables marked data-sortable (leaderboard, model and engine pages).
 * Progressive: without JavaScript the table is complete and in rank order; this only adds controls.
 * Rows with class "x" (failed, timeout, skipped, invalid output) always stay below the ok rows: they are never ranked.
 */

/** A cell's value for filters and sorting: its data-v where it shows more than its value (an entry with its engine's name, a scenario with its badge), else its text. */
function cellText(row: HTMLTableRowElement, col: number): string {
  const cell = row.cells[col];
  return (cell?.dataset.v ?? cell?.textContent ?? '').trim();
}

function numeric(text: string): number {
  const value = Number.parseFloat(text.replace(/,/g, ''));
  return Number.isFinite(value) ? value : Number.NaN;
}

function sortRows(table: HTMLTableElement, col: number, kind: string, descending: boolean): void {
  const body = table.tBodies[0];
  if (!body) return;
  const rows = [...body.rows];
  const ok = rows.filter((r) => !r.classList.contains('x'));
  const rest = rows.filter((r) => r.classList.contains('x'));
  const direction = descending ? -1 : 1;
  ok.sort((a, b) => {
    if (kind === 'num') {
      const x = numeric(cellText(a, col));
      const y = numeric(cellText(b, col));
      // Missing values sink to the bottom whichever the direction.
      if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) === Number.isNaN(y) ? 0 : Number.isNaN(x) ? 1 : -1;
      return (x - y) * direction;
    }
    return cellText(a, col).localeCompare(cellText(b, col)) * direction;
  });
  body.append(...ok, ...rest);
}

function enhanceSorting(table: HTMLTableElement): void {
  const headers = [...(table.tHead?.rows[0]?.cells ?? [])];
  headers.forEach((th, col) => {
    const kind = th.dataset.sort;
    if (!kind) return;
    const button = document.createElement('button');
    button.type = 'button';
    button.append(...th.childNodes);
    th.append(button);
    button.addEventListener('click', () => {
      // Numbers start high-to-low (best throughput first), text starts A-Z.
      const current = th.getAttribute('aria-sort');
      const descending = current ? current === 'ascending' : kind === 'num';
      for (const other of headers) other.removeAttribute('aria-sort');
      th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      sortRows(table, col, kind, descending);
    });
  });
}

function enhanceFilters(form: HTMLFormElement, table: HTMLTableElement): void {
  const selects = [...form.querySelectorAll<HTMLSelectElement>('select[data-col]')];
  const status = form.querySelector<HTMLSelectElement>('select[data-status]');
  const search = form.querySelector<HTMLInputElement>('input[data-search]');
  const count = form.querySelector<HTMLOutputElement>('output[data-count]');
  const rows = [...(table.tBodies[0]?.rows ?? [])];
  const apply = (): void => {
    const needle = search?.value.trim().toLowerCase() ?? '';
    let shown = 0;
    for (const row of rows) {
      const bad = row.classList.contains('x');
      const visible =
        selects.every((s) => s.value === '' || cellText(row, Number(s.dataset.col)) === s.value) &&
        (!status?.value || (status.value === 'x') === bad) &&
        (needle === '' || (row.textContent ?? '').toLowerCase().includes(needle));
      row.hidden = !visible;
      if (visible) shown += 1;
    }
    if (count) count.textContent = `${shown} of ${rows.length} rows`;
  };
  form.addEventListener('input', apply);
  form.addEventListener('submit', (event) => event.preventDefault());
  form.hidden = false;
  apply();
}

for (const table of document.querySelectorAll<HTMLTableElement>('table[data-sortable]')) {
  enhanceSorting(table);
  const form = document.querySelector<HTMLFormElement>(`form[data-filter-for="${table.id}"]`);
  if (form) enhanceFilters(form, table);
}
