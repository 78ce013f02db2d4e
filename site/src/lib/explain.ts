import type { PublishedProfile } from '@pbh/core';
import { Html } from './html.js';
import { pageError, type Scrub } from './scrub.js';

/** Why a Profile has no result, one cause each, in the order an engine page lists them. */
export const CAUSES = {
  precision: 'Precision mismatch',
  invalid: 'Outputs differ from the reference',
  unsupported: 'Operator or feature not supported',
  timeout: 'Ran out of time',
  crash: 'Worker crashed',
  unavailable: 'Engine not available here',
  config: 'Config the cell cannot run',
  interrupted: 'Interrupted',
  other: 'Other failure',
} as const;
export type Cause = keyof typeof CAUSES;

export interface Explanation {
  cause: Cause;
  /** What happened, in words a reader acts on. */
  words: string;
  /** What to change. */
  fix: string;
  /** The recorded message, without stderr or stack, paths scrubbed. */
  message: string;
}

const UNSUPPORTED = /not (?:yet )?supported|unsupported|not implemented|notimplemented|no kernel|cannot be converted|unknown op|no registered/i;
const CRASH = /exited with code|was killed by SIG|is not running|segmentation fault|core dumped|worker .*exited/i;
const CONFIG = /\bconfig\b|option|batch size|exclude|must be/i;

/**
 * The precision the runtime really computed in: the recorded executed precision, unless the engine's facts show an
 * inference precision hint of a narrower type (OpenVINO's INFERENCE_PRECISION_HINT, read back from the compiled model).
 */
function computedPrecision(p: PublishedProfile): string | null {
  const facts = p.profile.engine.facts as Record<string, unknown>;
  for (const [key, value] of Object.entries(facts)) {
    if (/precision/i.test(key) && typeof value === 'string' && /bf16|f16|fp16|i8|int8/i.test(value)) {
      return value.toLowerCase().replace(/^f(16|32)$/, 'fp$1');
    }
  }
  return p.precision;
}

const tolerance = (c: NonNullable<PublishedProfile['profile']['correctness']>): string =>
  `max abs error ${c.max_abs_error.toExponential(1)} against atol ${c.atol}, rtol ${c.rtol}`;

/** The cause, the words and the fix for a Profile that is not ok; null for an ok one. */
export function explainFailure(p: PublishedProfile, scrub: Scrub): Explanation | null {
  if (p.status === 'ok') return null;
  const message = pageError(p.error, scrub) ?? 'no reason recorded';
  const engine = p.engine_entry;
  const correctness = p.profile.correctness;
  const reference = correctness?.reference_engine ?? 'the reference engine';
  const model = p.profile.engine.precision?.model ?? 'fp32';
  const explained = (cause: Cause, words: string, fix: string): Explanation => ({ cause, words, fix, message });

  if (p.status === 'invalid_output') {
    const computed = computedPrecision(p);
    if (computed !== null && computed !== model) {
      return explained(
        'precision',
        `${engine} executed ${computed} while ${reference}, the reference, ran the model's own ${model}: its outputs differ by ` +
          `more than the tolerance${correctness ? ` (${tolerance(correctness)})` : ''}. That is the cost of ${computed}, not a wrong engine.`,
        `To compare like with like, set \`precision: ${model}\` on the ${engine} entry of the config. To accept ${computed}'s error, ` +
          'loosen `tolerance` (atol, rtol) in the config, then run the cell again.',
      );
    }
    return explained(
      'invalid',
      `${engine} computed at ${computed ?? 'an unrecorded precision'}, as the reference did, yet its outputs differ from ${reference}'s` +
        `${correctness ? ` (${tolerance(correctness)})` : ''}: a wrong answer is never timed.`,
      'Check the model with `pbh inspect MODEL`; if the difference is acceptable for this model, loosen `tolerance` in the config; otherwise report it against the engine.',
    );
  }
  if (p.status === 'timeout') {
    const limit = (p.profile.config as { experiment?: { timeout_s?: unknown } } | null)?.experiment?.timeout_s;
    return explained(
      'timeout',
      `The cell ran past its time limit${typeof limit === 'number' ? ` of ${limit} s` : ''} and was stopped; what it measured before then is kept.`,
      'Raise `timeout_s` in the config, or shorten the cell: fewer `sessions`, a smaller dataset `limit`, fewer `warmup_batches`.',
    );
  }
  if (p.status === 'skipped') {
    return explained('unavailable', `${p.engine_name} cannot run on this machine, so the cell was not attempted.`, message.includes('Fix') ? 'As the message says.' : 'Install the engine (see the message), or leave it out of the config.');
  }
  if (/interrupted|ctrl-c|sigint/i.test(message)) {
    return explained('interrupted', 'The run was interrupted while this cell was in flight.', 'Run the cell again (the Reproduce command below).');
  }
  if (UNSUPPORTED.test(message)) {
    return explained(
      'unsupported',
      `${p.engine_name} cannot run something this model uses (an operator, a data type or a shape).`,
      `Exclude the cell (\`exclude: [{ model: ${p.model_name}, engine: ${engine} }]\`), use another engine for this model, or export the model at another opset.`,
    );
  }
  if (CRASH.test(message)) {
    return explained(
      'crash',
      `${p.engine_name}'s worker process died during the cell; the runtime's last stderr lines are in this Profile's JSON (error_detail).`,
      'Run the cell alone with the Reproduce command to see the crash; lower the batch size if memory ran out; report it against the engine with the stderr.',
    );
  }
  if (CONFIG.test(message)) {
    return explained('config', 'The config asks this cell for something the engine or model cannot do.', 'Change the config as the message says, or exclude the cell.');
  }
  return explained('other', `${engine} failed.`, "Run the cell alone with the Reproduce command; the stderr and stack are in this Profile's JSON (error_detail).");
}

/** A fix's words as markup: its `code` spans as <code>, everything else escaped. */
export function fixHtml(fix: string): Html {
  return new Html(fix.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`).replace(/`([^`]+)`/g, '<code>$1</code>'));
}
