export * from './summary.js';
export * from './student-t.js';
export * from './welch.js';
