export { inProcessSystem, type InProcessOptions, type InProcessRuntime } from './in-process.js';
export { executeSchedule } from './executor.js';
export { checkSchedule, checkResident } from './checks.js';
