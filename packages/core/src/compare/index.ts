export * from './compare.js';
export * from './sides.js';
export * from './report.js';
