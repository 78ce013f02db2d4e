export type { DomainWindow, EnergyReader, EnergyReaderPlugin, OpenedReader } from './reader.js';
export { counterDelta, raplPlugin, raplZones, RaplReader, POWERCAP_ROOT, RAPL_DOCUMENTED_PERIOD_S } from './rapl.js';
export { nvmlPlugin, NvmlReader, NVML_SAMPLE_INTERVAL_S } from './nvml.js';
export { tdpEstimatePlugin, TdpEstimateReader, estimatedJoules, processCpuTicks, clockTicksPerSecond } from './estimate.js';
export { TDP_TABLE, normaliseCpuModel, resolveTdp, tdpRowFor, type TdpRow } from './tdp-table.js';
export { EnergyMeter, energyMeterFor, openEnergyMeter, defaultReaderPlugins, tdpFor } from './meter.js';
export { summarizeEnergy, profileEnergy, offEnergy, describeTdp, type SessionEnergy, type TrackedEnergy, type IdleWindows, type EnergyFacts } from './summary.js';
