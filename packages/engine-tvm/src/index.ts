import { definePlugin } from '@pbh/core';
import { tvmEngine, TVM_WORKER_SCRIPT } from './engine.js';

export { tvmEngine, TVM_WORKER_SCRIPT };
export { TVMOptionsSchema, type TVMOptions } from './options.js';
export default definePlugin({ name: '@pbh/engine-tvm', engines: [tvmEngine] });
