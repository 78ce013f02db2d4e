#!/usr/bin/env node
// npm run bench:energy — energy collection on against off, side by side and interleaved in one run (rounds alternate
// which goes first), same prepared model, batch and threads: PBH's session loop (runLoop) with the Performance Tracker
// given this machine's energy meter (RAPL / NVML where present, else the TDP estimate; energy/meter.ts) or none.
// Headline: each side's mean session throughput from the runtime's own times (what the leaderboard ranks); per round the
// ratio on/off, then the median over rounds. Also the tracker's start+stop time outside the timed region.
// Target: the headline changes by less than 1%. Needs `npm run build`, the venv and the bundled suite.
// Knobs: ROUNDS (5), SESSIONS (3 a side a round), SESSION_MS (1000), THREADS (2), CASES (a substring of a case label).
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { energyMeterFor, ExperimentSchema, PerformanceTracker, raplPlugin, runLoop, summarizeEnergy } from '@pbh/core';
import { onnxRuntimeEngine } from '@pbh/engine-onnx';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const suite = path.join(root, '.cache', 'suite');
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const SESSIONS = Number(process.env.SESSIONS ?? 3);
const SESSION_MS = Number(process.env.SESSION_MS ?? 1000);
const THREADS = Number(process.env.THREADS ?? 2);
const BATCHES = 8;
const TARGET = 0.01;

const workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-bench-energy-'));
const cases = [
  { label: 'digits_cnn b1 worker', model: path.join(suite, 'models', 'digits_cnn.onnx'), shape: [1, 1, 8, 8], process: 'worker' },
  { label: 'digits_cnn b1 harness', model: path.join(suite, 'models', 'digits_cnn.onnx'), shape: [1, 1, 8, 8], process: 'harness' },
].filter((c) => !process.env.CASES || c.label.includes(process.env.CASES));

const never = { check() {}, run: (p) => p, race: (p) => p };
const hr = process.hrtime.bigint;
const median = (values) => {
  const s = Float64Array.from(values).sort();
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
const options = onnxRuntimeEngine.optionsSchema.parse({ intraOpNumThreads: THREADS });
// What the meter reads of the machine (pbh run takes the same from systeminformation); the config's defaults.
const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
const system = { cpu_model: os.cpus()[0]?.model ?? 'unknown', cpu_vendor: /vendor_id\s*:\s*(.+)/.exec(cpuinfo)?.[1] ?? '', cpu_cores: os.cpus().length };
const settings = ExperimentSchema.shape.energy.parse(undefined);
const meter = energyMeterFor(settings, system);

function randomBatches(shape) {
  let seed = 1;
  const uniform = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) + 1) / (2 ** 31 + 1);
  const n = shape.reduce((a, d) => a * d, 1);
  return Array.from({ length: BATCHES }, () => ({ input: { dtype: 'float32', dims: shape, data: Float32Array.from({ length: n }, () => uniform()) } }));
}

/** One side of a round: SESSIONS tracked sessions of SESSION_MS; the mean session throughput and the tracker's own time. */
async function side(model, energy) {
  const tracker = new PerformanceTracker([], energy ? meter : null);
  // The tracker's start and stop, timed around the harness's calls to them (outside the sessions' timed region).
  let trackerNs = 0n;
  const timed = {
    start: async (ctx) => { const t = hr(); await tracker.start(ctx); trackerNs += hr() - t; },
    stop: async (ctx) => { const t = hr(); const r = await tracker.stop(ctx); trackerNs += hr() - t; return r; },
  };
  const metricContext = { pid: model.runsIn.pid, sampleRssBytes: async () => 0, cpuTimeUs: async () => 0 };
  const r = await runLoop({ sut: model.sut, residentBatches: BATCHES, preprocessNs: new Float64Array(BATCHES), batchSize: 1, sessions: SESSIONS, minSessionNs: SESSION_MS * 1e6, minSessionQueries: 1, tracker: timed, metricContext, deadline: never, clock: hr });
  const energyFigure = energy ? summarizeEnergy(r.energy, r.sessions.map((s) => s.samples), r.energy[0].facts, null) : null;
  return { sps: mean(r.sessions.map((s) => s.throughput_sps)), trackerUs: Number(trackerNs) / 1e3 / SESSIONS, energy: energyFigure };
}

/**
 * What the meter does inside a session, timed alone (so a busy machine's noise does not hide it): one poll of this
 * machine's readers, and one of a RAPL reader over a powercap tree of the kernel's layout (2 sockets x package, core,
 * uncore, dram; tmpfs, where sysfs reads an MSR per file), as a share of a second at energy.poll_ms.
 */
async function pollCost(reader, polls = 2000) {
  await reader.begin([process.pid]);
  const t = hr();
  for (let i = 0; i < polls; i++) await reader.poll();
  const us = Number(hr() - t) / 1e3 / polls;
  await reader.end();
  return us;
}
const treeRoot = path.join(workDir, 'powercap');
for (const [id, name] of [['intel-rapl:0', 'package-0'], ['intel-rapl:0:0', 'core'], ['intel-rapl:0:1', 'uncore'], ['intel-rapl:0:2', 'dram'], ['intel-rapl:1', 'package-1'], ['intel-rapl:1:0', 'core'], ['intel-rapl:1:1', 'uncore'], ['intel-rapl:1:2', 'dram']]) {
  await mkdir(path.join(treeRoot, id), { recursive: true });
  await writeFile(path.join(treeRoot, id, 'name'), `${name}\n`);
  await writeFile(path.join(treeRoot, id, 'max_energy_range_uj'), '262143328850\n');
  await writeFile(path.join(treeRoot, id, 'energy_uj'), '1000\n');
}
const treeReader = await raplPlugin(treeRoot).open();
const m = await meter;
const all = { begin: (pids) => Promise.all(m.readers.map((r) => r.begin(pids))), poll: () => Promise.all(m.readers.map((r) => r.poll())), end: () => Promise.all(m.readers.map((r) => r.end())) };
const costs = { machine: await pollCost(all), rapl: await pollCost(treeReader.reader) };

const rows = [];
for (const c of cases) {
  if (!existsSync(c.model)) throw new Error(`${c.model} is missing: run npm run generate`);
  const model = await onnxRuntimeEngine.prepare({ model: { name: c.label, path: c.model, workDir }, batchSize: 1, device: 'cpu', options, inputs: [], seed: 0, precision: 'fp32', process: c.process });
  await model.library.load(randomBatches(c.shape));
  await model.sut.closedLoop({ batches: BATCHES, minQueries: 2000, minDurationNs: 0 });
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round = {};
    const sides = [async () => (round.off = await side(model, false)), async () => (round.on = await side(model, true))];
    for (const s of r % 2 === 0 ? sides : sides.reverse()) await s();
    rounds.push(round);
    process.stderr.write(`round ${r + 1}/${ROUNDS} ${c.label}: off ${round.off.sps.toFixed(0)}, on ${round.on.sps.toFixed(0)} samples/s\n`);
  }
  await model.dispose();
  rows.push({ c, rounds });
}
await (await meter)?.close();

const load = os.loadavg().map((v) => v.toFixed(2)).join(', ');
console.log(`\nbench:energy ${new Date().toISOString().slice(0, 16)}Z, ${system.cpu_model} (${os.cpus().length} logical CPUs), threads=${THREADS}, rounds=${ROUNDS}, ${SESSIONS} sessions of ${SESSION_MS} ms a side a round, load average ${load}`);
console.log('headline: mean session throughput (samples/s, engine boundary); median over rounds\n');
console.log('| case | energy off | energy on | on/off − 1 (median of rounds) | rounds\' on/off − 1 | tracker start+stop, off / on (µs a session) | energy measured | target |');
console.log('|---|---:|---:|---:|---|---:|---|---|');
let missed = false;
for (const { c, rounds } of rows) {
  const change = median(rounds.map((r) => r.on.sps / r.off.sps - 1));
  const ok = Math.abs(change) < TARGET;
  missed ||= !ok;
  const e = rounds.at(-1).on.energy;
  const figure = e?.joules_per_sample != null ? `${(e.joules_per_sample * 1e6).toPrecision(3)} µJ/sample, ${e.method}` : `NULL: ${e?.reason ?? 'off'}`;
  console.log(
    `| ${c.label} | ${median(rounds.map((r) => r.off.sps)).toFixed(0)} | ${median(rounds.map((r) => r.on.sps)).toFixed(0)} | ${(change * 100).toFixed(2)}% | ${rounds.map((r) => `${((r.on.sps / r.off.sps - 1) * 100).toFixed(1)}%`).join(', ')} | ${median(rounds.map((r) => r.off.trackerUs)).toFixed(0)} / ${median(rounds.map((r) => r.on.trackerUs)).toFixed(0)} | ${figure} | ${ok ? 'met' : 'MISSED'} |`,
  );
}
const readers = (await meter)?.facts.unavailable.map((u) => `${u.reader}: ${u.reason}`).join('; ');
console.log(`\nreaders not available here: ${readers || 'none'}`);
const share = (us) => `${((us / (settings.poll_ms * 1e3)) * 100).toFixed(4)}%`;
console.log(`in-session work, timed alone: a poll of this machine's meter ${costs.machine.toFixed(1)} µs (${share(costs.machine)} of a session at one poll per ${settings.poll_ms} ms); of RAPL over an 8-zone powercap tree ${costs.rapl.toFixed(1)} µs (${share(costs.rapl)})`);
console.log(`target: energy collection changes the headline by less than 1%: ${missed ? 'MISSED' : 'met'}`);
