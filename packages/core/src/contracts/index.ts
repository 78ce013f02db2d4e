export * from './tensor.js';
export * from './precision.js';
export * from './engine.js';
export * from './scorer.js';
export * from './metric.js';
export * from './dataset.js';
export * from './plugin.js';
export * from './profile.js';
