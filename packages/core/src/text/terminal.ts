/**
 * Characters a terminal acts on instead of showing: C0 controls (ESC starts ANSI colours, cursor moves and OSC
 * sequences such as hyperlinks and window titles; CR and LF rewrite or fake lines), DEL, C1 controls (0x9B is a
 * one-byte CSI on terminals that honour 8-bit controls), the Unicode line and paragraph separators, and the bidi
 * overrides and isolates that make text read in another order than it is stored ("Trojan Source").
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_KEEPING_NEWLINES = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function visible(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

export interface TerminalSafeOptions {
  /** Keep LF as a line break (multi-line messages written by PBH itself); every other control is still shown escaped. */
  keepNewlines?: boolean;
}

/**
 * Text from outside PBH (model and engine names, error messages, query results) made safe to print on a terminal:
 * each control character is shown as an escape (ESC as \x1b, LF as \n) instead of being sent, so a hostile name
 * cannot recolour, move the cursor, set a hyperlink or the title, or forge a line of output. Printable text,
 * including non-ASCII letters, is unchanged.
 */
export function terminalSafe(text: string, options: TerminalSafeOptions = {}): string {
  return text.replace(options.keepNewlines === true ? UNSAFE_KEEPING_NEWLINES : UNSAFE, visible);
}
