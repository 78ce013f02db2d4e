export * from './points.js';
export * from './detect.js';
export * from './changes.js';
export * from './series.js';
