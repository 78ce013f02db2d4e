import { html, Html } from './html.js';

export interface ChartFigure {
  /** Markup from src/charts (Observable Plot's figure: its legends and the SVG; database strings escaped by the DOM serialiser). */
  svg: string;
  title: string;
  caption?: string | undefined;
  /** The chart's numbers as a table: the text alternative for readers who cannot see it. */
  table?: { columns: string[]; rows: string[][] } | undefined;
  /** Show the table open under the chart (the Sparsity study's numbers), not folded away. */
  open?: boolean | undefined;
}

/** A chart with its caption and its data table, as Chart.astro and the Profile pages (rendered outside Astro) show it. */
export function chartFigureHtml({ svg, title, caption, table, open = false }: ChartFigure): Html {
  const data = table && html`<details${open && html` open`}><summary>Data table</summary><div class="table-wrap"><table class="num"><thead><tr>${table.columns.map((c) => html`<th>${c}</th>`)}</tr></thead><tbody>${table.rows.map((row) => html`<tr>${row.map((cell) => html`<td>${cell}</td>`)}</tr>`)}</tbody></table></div></details>`;
  return html`<figure class="chart"><figcaption><strong>${title}</strong>${caption && html`<span>${caption}</span>`}</figcaption>${new Html(svg)}${data}</figure>`;
}
