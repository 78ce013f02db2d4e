export * from './protocol.js';
export * from './errors.js';
export * from './framing.js';
export { WorkerClient, WORKER_PYTHON_DIR, DEFAULT_REQUEST_TIMEOUT_MS } from './client.js';
export type { WorkerSpawnOptions, RequestOptions, Reply, WorkerExit } from './client.js';
export { killAllWorkers, liveWorkerCount } from './orphans.js';
export * from './venv.js';
export { createNativeEngine, DEFAULT_NATIVE_TIMEOUTS } from './native-engine.js';
export type { NativeEngine, NativeEngineOptions, NativeEngineTimeouts } from './native-engine.js';
