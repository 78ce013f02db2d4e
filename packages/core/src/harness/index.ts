export * from './sweep.js';
export * from './progress.js';
export * from './summary-table.js';
export * from './correctness.js';
export * from './errors.js';
export { toleranceFor, type Tolerance } from './tolerance.js';
export { runLoop, type LoopPlan, type LoopResult } from './loop.js';
export { PerformanceTracker, aggregateMetrics } from './tracker.js';
