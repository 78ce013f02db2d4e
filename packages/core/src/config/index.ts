export * from './schema.js';
export * from './load.js';
export * from './keys.js';
export { didYouMean } from './suggest.js';
