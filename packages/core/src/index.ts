/**
 * @pbh/core's public API, curated: what plugin authors (engines, scorers, metrics), native engine packages, the site
 * and scripts build on. Everything else is internal to core and may change without notice.
 */

// Contracts: the shapes a plugin implements and the Profile every cell becomes.
export * from './contracts/index.js';
export type { Experiment, ExperimentInput, EngineEntry, ModelConfig } from './config/schema.js';
export { ExperimentSchema } from './config/schema.js';
export { excludedCells, type ExcludedCell } from './config/keys.js';
export { loadExperiment, ConfigError, type LoadedExperiment } from './config/load.js';

// Plugins and the built-ins they sit beside.
export { createRegistry, loadPlugin, Registry, UnknownNameError, PluginLoadError } from './plugins/registry.js';
export { builtinScorers } from './scorers/index.js';
export { builtinMetrics } from './metrics/index.js';

// Native engines: the worker protocol's TypeScript side and the project venv.
export { createNativeEngine, enginesFromManifest, DEFAULT_NATIVE_TIMEOUTS, type NativeEngine, type NativeEngineTimeouts } from './worker/native-engine.js';
export { MANIFEST_FILE, readManifest, optionsSchemaOf, ManifestError, ManifestSchema, type EngineDeclaration, type Manifest } from './worker/manifest.js';
export { findVenvPython, VENV_FIX, type PythonLocation } from './worker/venv.js';
export { liveWorkerCount } from './worker/orphans.js';

// Datasets, the loop and statistics, for scripts that drive the harness directly (benchmarks).
export { loadDataset } from './dataset/load.js';
export { buildPreprocessor } from './dataset/preprocess.js';
export { runLoop, type LoopPlan, type LoopResult } from './harness/loop.js';
export * from './engine-kit/index.js';
export { PerformanceTracker, aggregateMetrics } from './harness/tracker.js';
export * from './energy/index.js';
export { runSweep, type SweepOptions, type SweepResult } from './harness/sweep.js';
export { profileVerdicts } from './publish/verdicts.js';
export { summarize, percentile } from './stats/summary.js';
export * from './stats/student-t.js';

// The store, and the published data contract the site reads.
export { openStore, ProfileStore, type OpenStoreOptions } from './store/store.js';
export { runQuery, runSandboxedQuery, type QueryResult } from './store/query.js';
export { exportStore, EXPORTED_RELATIONS, type ExportFormat, type ExportOptions } from './store/export.js';
export { LATEST_SCHEMA_VERSION } from './store/migrations.js';
export { StoreLockedError, StoreNotFoundError, StoreSchemaError, StoreUnreadableError, ReadOnlyStoreError, StoreWriteError, QueryError } from './store/errors.js';
export * from './publish/index.js';

export { analyzeModel, type ModelAnalysis } from './model/analyze.js';
export { readOnnxModel, type OnnxModel } from './model/onnx-reader.js';
export { convertModel, converterFor, type Conversion } from './model/convert.js';
export { HARNESS_VERSION } from './version.js';
export { terminalSafe, type TerminalSafeOptions } from './text/terminal.js';
export { neutraliseFormula } from './text/csv-formula.js';
