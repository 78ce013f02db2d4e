export * from './info.js';
export * from './peak.js';
