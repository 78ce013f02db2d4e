import type { PreparedModel } from '../../contracts/engine.js';
import type { GenerationSchedule, GenerationTrace, TextScore } from '../../contracts/generation.js';
import { runGenerationLoop, scoreTextWith, type LmStep } from './lm-loop.js';

/**
 * Where generation runs: in the runtime's process when the prepared model brings its own loop (a worker), else the
 * harness's loop on predict, which for an in-process engine (onnxruntime) is the runtime's process too.
 */
export interface Generator {
  executor: 'runtime' | 'harness';
  generate(schedule: GenerationSchedule): Promise<GenerationTrace[]>;
  scoreText(tokens: number[], window: number): Promise<TextScore>;
}

export function generatorOf(model: PreparedModel, cacheShape: number[], signal?: AbortSignal): Generator {
  const step: LmStep = async (feeds) => (await model.predict(feeds)).outputs;
  return {
    executor: model.generate ? 'runtime' : 'harness',
    generate: model.generate ? model.generate.bind(model) : (s) => runGenerationLoop(step, s, signal),
    scoreText: model.scoreText ? (tokens, window) => model.scoreText!(tokens, window, cacheShape) : (tokens, window) => scoreTextWith(step, tokens, window, cacheShape, signal),
  };
}
