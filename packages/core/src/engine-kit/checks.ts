import type { ClosedLoopRequest, QuerySchedule } from '../contracts/engine.js';

/** A schedule the system under test can run: one arrival per query, in order, within the model's concurrency. */
export function checkSchedule(schedule: QuerySchedule, maxConcurrency: number, engine: string): void {
  const { batches, arrivalsNs, concurrency } = schedule;
  if (batches.length === 0 || batches.length !== arrivalsNs.length) {
    throw new Error(`${engine}: a schedule needs one arrival per query and at least one query (got ${batches.length} batches, ${arrivalsNs.length} arrivals)`);
  }
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > maxConcurrency) {
    throw new Error(`${engine}: schedule concurrency ${concurrency} is outside 1..${maxConcurrency} (the model's maxConcurrency)`);
  }
}

/** Resident batches a request may use: some are loaded, and the request stays within them. */
export function checkResident(cmd: string, loaded: number, uses: number, engine: string): void {
  if (loaded === 0) throw new Error(`${engine}: "${cmd}" before the samples were loaded: load the batches first`);
  if (uses > loaded || uses < 1 || !Number.isInteger(uses)) throw new Error(`${engine}: "${cmd}" uses ${uses} batches but ${loaded} are resident`);
}

export function checkClosedLoop(request: ClosedLoopRequest, loaded: number, engine: string): void {
  checkResident('closedLoop', loaded, request.batches, engine);
}
