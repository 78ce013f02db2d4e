import { definePlugin } from '@pbh/core';
import { openvinoEngine, OPENVINO_WORKER_SCRIPT } from './engine.js';

export { openvinoEngine, OPENVINO_WORKER_SCRIPT };
export { OpenVINOOptionsSchema, type OpenVINOOptions } from './options.js';
export default definePlugin({ name: '@pbh/engine-openvino', engines: [openvinoEngine] });
