import { escapeText } from './escape.js';

/**
 * Markup written as strings, for parts of a page that repeat thousands of times (a Profile page's tables): Astro
 * renders each component and each expression on its own, which at 10,000 Profile pages was most of their build time.
 * Every value interpolated into html`` is escaped unless it is itself Html, so database strings cannot become markup.
 */
export class Html {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

export type HtmlPart = Html | string | number | null | undefined | false | readonly HtmlPart[];

function write(part: HtmlPart): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.value;
  if (typeof part === 'number') return String(part);
  if (typeof part === 'string') return escapeText(part);
  let out = '';
  for (const item of part) out += write(item);
  return out;
}

/** A template whose values are escaped (strings), printed (numbers), joined (lists) or skipped (null, false). */
export function html(strings: TemplateStringsArray, ...parts: HtmlPart[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < parts.length; i++) out += write(parts[i]) + strings[i + 1]!;
  return new Html(out);
}
