export * from './sweep.js';
export * from './progress.js';
export * from './summary-table.js';
export * from './correctness.js';
export * from './errors.js';
export { runLoop } from './loop.js';
