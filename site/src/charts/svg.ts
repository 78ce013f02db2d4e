/** Text for SVG/HTML built as strings: every database string passes through here before it reaches markup. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Coordinates to one decimal: enough for screen pixels, and keeps long polylines small. */
export function coord(value: number): string {
  return String(Math.round(value * 10) / 10);
}

/** Observable's ten categorical colours: distinct for common colour-vision deficiencies. */
export const PALETTE = ['#4269d0', '#efb118', '#ff725c', '#6cc5b0', '#3ca951', '#ff8ab7', '#a463f2', '#97bbf5', '#9c6b4e', '#9498a0'];

export function colorAt(index: number): string {
  return PALETTE[index % PALETTE.length] ?? '#4269d0';
}

/** The accessible frame every chart shares: role img, a title and a description that screen readers announce. */
export function svgFrame(id: string, width: number, height: number, title: string, description: string, body: string): string {
  const safeId = id.replace(/[^A-Za-z0-9_-]/g, '_');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" ` +
    `aria-labelledby="${safeId}-t ${safeId}-d" class="chart-svg" font-family="system-ui, sans-serif" font-size="11">` +
    `<title id="${safeId}-t">${escapeXml(title)}</title><desc id="${safeId}-d">${escapeXml(description)}</desc>${body}</svg>`
  );
}
