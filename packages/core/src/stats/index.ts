export * from './summary.js';
export * from './student-t.js';
