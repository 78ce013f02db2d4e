import { definePlugin } from '@pbh/core';
import { PYTORCH_FIX, PYTORCH_WORKER_SCRIPT, pytorchEngine, torchCompileEngine, torchscriptEngine } from './engines.js';

export { PYTORCH_FIX, PYTORCH_WORKER_SCRIPT, pytorchEngine, torchCompileEngine, torchscriptEngine };
export { CompileOptionsSchema, EagerOptionsSchema, TorchScriptOptionsSchema, type CompileOptions, type EagerOptions, type TorchScriptOptions } from './options.js';
export default definePlugin({ name: '@pbh/engine-pytorch', engines: [pytorchEngine, torchscriptEngine, torchCompileEngine] });
