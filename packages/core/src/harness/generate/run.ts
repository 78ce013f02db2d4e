import type { Generator, PreparedModel } from '../../contracts/engine.js';
import type { GenerationSchedule, GenerationTrace, TextScore } from '../../contracts/generation.js';
import { CellConfigError } from '../errors.js';
import { runGenerationLoop, scoreTextWith, type LmStep } from './lm-loop.js';

/**
 * Where generation runs: in the runtime's process when the prepared model declares a generator of its own (a
 * worker), else the harness's loop on infer, which for an in-process engine is the runtime's process too.
 */
export interface GenerationRunner {
  executor: 'runtime' | 'harness';
  serves: Generator['serves'];
  generate(schedule: GenerationSchedule): Promise<GenerationTrace[]>;
  /** null: the runtime gives no logits, so perplexity is not measured on it. */
  scoreText: ((tokens: number[], window: number) => Promise<TextScore>) | null;
  rankTokens: Generator['rankTokens'];
}

export function generatorOf(model: PreparedModel, cacheShape: number[] | null, signal?: AbortSignal): GenerationRunner {
  const own = model.generator;
  if (own) {
    const score = own.scoreText;
    return { executor: 'runtime', serves: own.serves, generate: (s) => own.generate(s), scoreText: score ? (tokens, window) => score(tokens, window, cacheShape) : null, rankTokens: own.rankTokens };
  }
  if (cacheShape === null) {
    throw new CellConfigError(`${model.runsIn.binding} in the harness's process drives PBH's own cache graph only; a Hugging Face decoder runs in the engine's worker: set process: worker on this engine entry.`);
  }
  const step: LmStep = async (feeds) => (await model.sut.infer(feeds)).outputs;
  return {
    executor: 'harness',
    serves: 'interleaved',
    // The harness's loop runs onnxruntime-node in fp32; its gate is exact.
    rankTokens: null,
    generate: (s) => runGenerationLoop(step, { ...s, cacheShape }, signal),
    scoreText: (tokens, window) => scoreTextWith(step, tokens, window, cacheShape, signal),
  };
}
