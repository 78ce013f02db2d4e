import path from 'node:path';

/** Paths into the bundled suite that test/global-setup.ts generates. */
export const ROOT = path.resolve(import.meta.dirname, '..');
export const SUITE = path.join(ROOT, '.cache', 'suite');
export const suiteModel = (name: string): string => path.join(SUITE, 'models', `${name}.onnx`);
export const suiteData = (file: string): string => path.join(SUITE, 'data', file);
export const PBH_BIN = path.join(ROOT, 'packages', 'core', 'dist', 'cli', 'main.js');

/** The bundled byte LM and its data (python/generate_lm.py, also run by test/global-setup.ts). */
export const LM = path.join(ROOT, '.cache', 'lm');

/** The LLMs of real architectures, their exports and their data (python/generate_llms.py; needs `pbh doctor --fix --engine llm`). */
export const LLMS = path.join(ROOT, '.cache', 'llms');
