import { definePlugin } from '@pbh/core';
import { onnxRuntimeEngine } from './engine.js';

export { onnxRuntimeEngine };
export { OnnxOptionsSchema, type OnnxOptions } from './options.js';
export default definePlugin({ name: '@pbh/engine-onnx', engines: [onnxRuntimeEngine] });
