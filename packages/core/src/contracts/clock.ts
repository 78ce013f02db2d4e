/** A monotonic clock in ns. The harness and in-process engines take one, so tests can inject a clock that never waits. */
export type Clock = () => bigint;

export const hrtimeClock: Clock = process.hrtime.bigint;
