export * from './errors.js';
export * from './load.js';
export * from './npy.js';
export * from './preprocess.js';
export { decodePng } from './image-folder.js';
