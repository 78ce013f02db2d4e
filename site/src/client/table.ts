/**
 * Sorting and filtering for tables marked data-sortable (leaderboard, model and engine pages).
 * Progressive: without JavaScript the table is complete and in rank order; this only adds controls.
 * A table has one <tbody> per group, its first row (class "g") the group's heading: sorting sorts within each group,
 * the heading stays first, and a group whose rows are all filtered out hides its heading too.
 * Rows with class "x" (failed, timeout, skipped, wrong output) always stay below the others: they are never ranked;
 * INVALID rows (class "iv") are in groups of their own, unranked.
 */

/** A cell's value for filters and sorting: its data-v where it shows more than its value (an entry with its engine's name, a figure with its mark), else its text. */
function cellText(row: HTMLTableRowElement, col: number): string {
  const cell = row.cells[col];
  return (cell?.dataset.v ?? cell?.textContent ?? '').trim();
}

/** A fact (model, batch, scenario, precision, device, hardware): the row's own where it carries one, else its <tbody>'s. */
function groupValue(row: HTMLTableRowElement, key: string): string {
  return row.dataset[key] ?? (row.parentElement as HTMLTableSectionElement | null)?.dataset[key] ?? '';
}

/** A row's verdict: VALID or INVALID from its verdict cell (data-v), empty for a row without one. */
const verdictOf = (row: HTMLTableRowElement): string => row.querySelector<HTMLElement>('td[data-v="VALID"], td[data-v="INVALID"]')?.dataset.v ?? '';

function numeric(text: string): number {
  const value = Number.parseFloat(text.replace(/,/g, '').replace('−', '-'));
  return Number.isFinite(value) ? value : Number.NaN;
}

const dataRows = (body: HTMLTableSectionElement): HTMLTableRowElement[] => [...body.rows].filter((r) => !r.classList.contains('g'));

function sortRows(table: HTMLTableElement, col: number, kind: string, descending: boolean): void {
  const direction = descending ? -1 : 1;
  for (const body of table.tBodies) {
    const rows = dataRows(body);
    const ok = rows.filter((r) => !r.classList.contains('x'));
    const rest = rows.filter((r) => r.classList.contains('x'));
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
      // Numbers start best first: high-to-low (throughput), or low-to-high where less is better (data-low-first:
      // latency, memory, energy); text starts A-Z.
      const current = th.getAttribute('aria-sort');
      const descending = current ? current === 'ascending' : kind === 'num' && th.dataset.lowFirst === undefined;
      for (const other of headers) other.removeAttribute('aria-sort');
      th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      sortRows(table, col, kind, descending);
    });
  });
}

function enhanceFilters(form: HTMLFormElement, table: HTMLTableElement): void {
  const selects = [...form.querySelectorAll<HTMLSelectElement>('select[data-col], select[data-key]')];
  const status = form.querySelector<HTMLSelectElement>('select[data-status]');
  const verdict = form.querySelector<HTMLSelectElement>('select[data-verdict]');
  const quiet = form.querySelector<HTMLInputElement>('input[data-quiet]');
  const search = form.querySelector<HTMLInputElement>('input[data-search]');
  const count = form.querySelector<HTMLOutputElement>('output[data-count]');
  const bodies = [...table.tBodies];
  const total = bodies.reduce((n, body) => n + dataRows(body).length, 0);
  const matches = (row: HTMLTableRowElement, select: HTMLSelectElement): boolean =>
    select.value === '' || (select.dataset.key ? groupValue(row, select.dataset.key) : cellText(row, Number(select.dataset.col))) === select.value;
  const apply = (): void => {
    const needle = search?.value.trim().toLowerCase() ?? '';
    let shown = 0;
    for (const body of bodies) {
      const heading = (body.rows[0]?.classList.contains('g') ? body.rows[0].textContent : '')?.toLowerCase() ?? '';
      let inGroup = 0;
      for (const row of dataRows(body)) {
        const bad = row.classList.contains('x');
        const visible =
          selects.every((s) => matches(row, s)) &&
          (!status?.value || (status.value === 'x') === bad) &&
          (!verdict?.value || verdictOf(row) === verdict.value) &&
          (!quiet?.checked || row.querySelector('.noisy') === null) &&
          (needle === '' || `${heading} ${row.textContent ?? ''}`.toLowerCase().includes(needle));
        row.hidden = !visible;
        if (visible) inGroup += 1;
      }
      body.hidden = inGroup === 0;
      shown += inGroup;
    }
    if (count) count.textContent = `${shown} of ${total} rows`;
  };
  // The filters live in the page's address (?model=…&batch=…), so a filtered table can be linked and survives a reload.
  const controls: [string, HTMLSelectElement | HTMLInputElement][] = [
    ...selects.map((s): [string, HTMLSelectElement] => [s.dataset.key ?? `col${s.dataset.col ?? ''}`, s]),
    ...(status ? [['status', status] as [string, HTMLSelectElement]] : []),
    ...(verdict ? [['verdict', verdict] as [string, HTMLSelectElement]] : []),
    ...(search ? [['q', search] as [string, HTMLInputElement]] : []),
  ];
  const params = new URLSearchParams(window.location.search);
  for (const [name, control] of controls) {
    const value = params.get(name);
    // A select takes only one of its options: a hand-edited address cannot make a filter that hides everything silently.
    if (value !== null && (!(control instanceof HTMLSelectElement) || [...control.options].some((o) => o.value === value))) control.value = value;
  }
  if (quiet && params.get('quiet') === '1') quiet.checked = true;
  const remember = (): void => {
    const next = new URLSearchParams();
    for (const [name, control] of controls) if (control.value !== '') next.set(name, control.value);
    if (quiet?.checked) next.set('quiet', '1');
    const query = next.toString();
    history.replaceState(history.state, '', `${window.location.pathname}${query === '' ? '' : `?${query}`}${window.location.hash}`);
  };
  form.addEventListener('input', () => {
    apply();
    remember();
  });
  form.addEventListener('submit', (event) => event.preventDefault());
  form.hidden = false;
  apply();
}

for (const table of document.querySelectorAll<HTMLTableElement>('table[data-sortable]')) {
  enhanceSorting(table);
  const form = document.querySelector<HTMLFormElement>(`form[data-filter-for="${table.id}"]`);
  if (form) enhanceFilters(form, table);
}
