export * from './summary.js';
