#!/usr/bin/env node
// npm run bench:serve — the openai engine's client against servers it starts on loopback:
//  1. its own floor on scripts/openai_echo_server.py (each stream in one write): TTFT p99 with 1, 8, 16 ... STREAMS
//     requests sent at once (target < 1 ms at 64), the echo server's CPU over each run and per added request (it
//     shares the cores, so it is part of that floor), and issue lateness p99 and max at RATE_FLOOR req/s (target < 1 ms at 200)
//     beside the machine's own: a loop that only wakes at the same arrivals (scripts/serve_wake_loop.py); and TTFT p99
//     with STEADY_IN_FLIGHT streams open at a time (Poisson arrivals for STEADY_S s, each stream's chunks ITL_MS apart);
//     where AIPerf is installed (below), its own client's TTFT p99 on the same echo server and prompts beside each;
//  2. PBH beside a bare asyncio/aiohttp loop (scripts/serve_bare_loop.py) and, where it is installed, NVIDIA's AIPerf
//     (`aiperf profile`, the same requests replayed at the same offsets with --fixed-schedule), taking turns on one
//     `transformers serve` process of the Llama folder per round, at RATE req/s, CONCURRENCY in flight: TTFT and TPOT
//     p50 and PBH's ratio to each, paired within a round (target: within 5%).
//     AIPerf is not a PBH dependency (its own venv, about 1.2 GB): AIPERF names its executable (empty: skip it), else
//     .cache/aiperf/bin/aiperf is used when present (python3 -m venv .cache/aiperf && .cache/aiperf/bin/pip install
//     aiperf==0.13.0), else that column is skipped.
// Every figure is the median over ROUNDS (rounds rotate which client goes first), in ms. Needs `npm run build`,
// the venv with the LLM packages (npx pbh doctor --fix --engine pytorch --engine llm); the LLMs of python/generate_llms.py are built here when missing.
// Knobs: ROUNDS (3), STREAMS (1,8,16,64), RATE_FLOOR (200), FLOOR_REQUESTS (1000), RATE (2), CONCURRENCY (4), PROMPTS (16),
// MAX_NEW (16), MODEL (llama_gqa), ITL_MS (10), STEADY_IN_FLIGHT (64), STEADY_S (3), FLOOR_ONLY (1: part 1 only), AIPERF.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { poissonArrivalsNs } from '../packages/core/dist/harness/scenarios/schedule.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = path.join(root, '.venv', 'bin', 'python');
const pbh = path.join(root, 'packages', 'core', 'dist', 'cli', 'main.js');
const llms = path.join(root, '.cache', 'llms');
const num = (name, fallback) => Number(process.env[name] ?? fallback);
const ROUNDS = num('ROUNDS', 3);
const STREAMS = (process.env.STREAMS ?? '1,8,16,64').split(',').map(Number);
const RATE_FLOOR = num('RATE_FLOOR', 200);
const FLOOR_REQUESTS = num('FLOOR_REQUESTS', 1000);
const RATE = num('RATE', 2);
const CONCURRENCY = num('CONCURRENCY', 4);
const PROMPTS = num('PROMPTS', 16);
const MAX_NEW = num('MAX_NEW', 16);
const MODEL = process.env.MODEL ?? 'llama_gqa';
const ITL_MS = num('ITL_MS', 10);
const STEADY_IN_FLIGHT = num('STEADY_IN_FLIGHT', 64);
const STEADY_S = num('STEADY_S', 3);
const TOLERANCE_SHARE = 0.05;

const work = mkdtempSync(path.join(os.tmpdir(), 'pbh-bench-serve-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
/** The q-quantile with linear interpolation, as PBH's statistics take it. */
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  return s[Math.floor(at)] + (s[Math.ceil(at)] - s[Math.floor(at)]) * (at - Math.floor(at));
};
const env = { ...process.env, USE_TF: '0' };
const folder = path.join(llms, MODEL, 'hf');
// The LLMs of python/generate_llms.py, built here when missing (as bench:litert builds its models).
if (!existsSync(path.join(llms, 'llms.json'))) execFileSync(python, [path.join(root, 'python', 'generate_llms.py')], { stdio: ['ignore', 'ignore', 'inherit'] });
const texts = readFileSync(path.join(llms, 'data', 'prompts.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).prompt);
const children = [];

/** The arrivals PBH's session 0 draws (seed 0) for n requests at `rate` req/s, ns after the start. */
const sessionArrivalsNs = (n, rate) => poissonArrivalsNs(n, rate, 0).slice(0, n);

/** n prompts, the prompt file's in turn. */
const textsOf = (n) => Array.from({ length: n }, (_, i) => texts[i % texts.length]);

function promptsFile(name, n) {
  const file = path.join(work, `${name}.jsonl`);
  writeFileSync(file, textsOf(n).map((prompt) => JSON.stringify({ prompt })).join('\n') + '\n');
  return file;
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A process's CPU time so far, ns (the first field of /proc/PID/schedstat). */
const cpuNs = (pid) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);

/** Starts a server and resolves when its output matches `ready` (the child is children.at(-1)). */
function start(command, args, ready) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let said = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start: ${said.slice(-1000)}`)), 300_000);
    const on = (chunk) => {
      said += chunk.toString();
      if (ready.test(said)) {
        clearTimeout(timer);
        resolve(said);
      }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${said.slice(-1000)}`)));
  });
}

/** One PBH run of the openai engine; the stored Profile's figures. */
function pbhRun(name, prompts, options, scenario, concurrency, maxNew) {
  const config = path.join(work, `${name}.json`);
  const db = path.join(work, `${name}.duckdb`);
  writeFileSync(
    config,
    JSON.stringify({
      name: 'bench-serve',
      dataset: { kind: 'text', prompts },
      models: [{ name: MODEL, path: folder }],
      generate: { max_new_tokens: maxNew, max_concurrency: concurrency, gate_prompts: 0, perplexity: false },
      engines: [{ name: 'openai', options: { late_ms: 1000, ...options }, scenario }],
      batch_sizes: [1],
      warmup_batches: 1,
      sessions: 1,
    }),
  );
  execFileSync('node', [pbh, 'run', config, '--db', db], { stdio: ['ignore', 'ignore', 'inherit'], env });
  const sql = "SELECT g.ttft_p50_ms, g.ttft_p99_ms, g.tpot_p50_ms, json_extract(p.profile_json, '$.scenario.issue_delay.p99')::DOUBLE / 1e6 AS late_p99_ms, json_extract(p.profile_json, '$.scenario.issue_delay.max')::DOUBLE / 1e6 AS late_max_ms, p.status FROM generation g JOIN profiles p USING (profile_id)";
  const [row] = JSON.parse(execFileSync('node', [pbh, 'query', '--db', db, '--format', 'json', sql], { env }).toString());
  if (!row) throw new Error(`${name}: no generate Profile stored (see the run above)`);
  return row;
}

/** The machine's lateness, ms: a loop that only wakes at the paced run's arrivals (PBH's session 0, seed 0). */
function wakeLoop() {
  const arrivals = path.join(work, 'wake-arrivals.json');
  writeFileSync(arrivals, JSON.stringify(sessionArrivalsNs(FLOOR_REQUESTS, RATE_FLOOR).map(Math.round)));
  const out = execFileSync(python, [path.join(root, 'scripts', 'serve_wake_loop.py'), arrivals], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.toString().trim().split('\n').at(-1)).late_ns.map((ns) => ns / 1e6);
}

function bare(base, model, prompts) {
  const file = path.join(work, 'bare-prompts.json');
  writeFileSync(file, JSON.stringify(prompts));
  // PBH's session 0 arrivals (seed 0): both clients send the same requests at the same offsets.
  const arrivals = path.join(work, 'bare-arrivals.json');
  writeFileSync(arrivals, JSON.stringify(sessionArrivalsNs(prompts.length, RATE).map(Math.round)));
  const out = execFileSync(python, [path.join(root, 'scripts', 'serve_bare_loop.py'), base, model, 'chat', file, String(MAX_NEW), arrivals, String(CONCURRENCY), path.join(folder, 'tokenizer.json')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const { ttft_ms: ttft, tpot_ms: tpot } = JSON.parse(out.toString().trim().split('\n').at(-1));
  return { ttft: median(ttft), tpot: median(tpot) };
}

const aiperf = process.env.AIPERF ?? (existsSync(path.join(root, '.cache', 'aiperf', 'bin', 'aiperf')) ? path.join(root, '.cache', 'aiperf', 'bin', 'aiperf') : null);

/**
 * One AIPerf run (chat, streamed) of `prompts`: with `arrivalsNs`, each prompt at its offset (--fixed-schedule), else
 * all of them at once, `concurrency` in flight; its exported figures. `warmup` requests go first, as PBH's warm-up does.
 */
function aiperfRun(tag, base, model, prompts, arrivalsNs, concurrency, warmup) {
  const file = path.join(work, `aiperf-${tag}.jsonl`);
  writeFileSync(file, prompts.map((text, i) => JSON.stringify(arrivalsNs ? { text, timestamp: arrivalsNs[i] / 1e6 } : { text })).join('\n') + '\n');
  const out = path.join(work, `aiperf-${tag}`);
  // --use-legacy-max-tokens: max_tokens, as PBH sends (AIPerf always asks for stream_options.include_usage, as PBH does);
  // it counts output tokens with the model's own tokenizer.
  const schedule = [...(arrivalsNs ? ['--fixed-schedule'] : []), ...(warmup ? ['--warmup-request-count', String(warmup)] : [])];
  execFileSync(aiperf, ['profile', '--model', model, '--url', base.replace(/\/v1$/, ''), '--endpoint-type', 'chat', '--streaming', '--input-file', file, '--custom-dataset-type', 'single_turn', ...schedule, '--request-count', String(prompts.length), '--concurrency', String(concurrency), '--output-tokens-mean', String(MAX_NEW), '--use-legacy-max-tokens', '--extra-inputs', 'temperature:0', '--tokenizer', folder, '--ui-type', 'none', '--artifact-dir', out], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const figures = JSON.parse(readFileSync(path.join(out, 'profile_export_aiperf.json'), 'utf8'));
  const done = figures.request_count?.avg ?? figures.request_count;
  if (done !== prompts.length) throw new Error(`AIPerf completed ${JSON.stringify(done)} of ${prompts.length} requests (see ${out}/logs/aiperf.log)`);
  return figures;
}

/** AIPerf on part 2's requests: each prompt at PBH's session 0 arrival (seed 0), the same body (max_tokens, usage). */
function aiperfPaired(base, model, prompts, round) {
  const figures = aiperfRun(`hf-${round}`, base, model, prompts, sessionArrivalsNs(prompts.length, RATE), CONCURRENCY, 0);
  return { ttft: figures.time_to_first_token.p50, tpot: figures.inter_token_latency.p50 };
}

const m = (xs, k) => median(xs.map((x) => x[k]));
const fmt = (x) => x.toFixed(3);

function printFloor(bursts, floor) {
  console.log(`client floor on the echo server (${MAX_NEW} chunks a request, ${ROUNDS} rounds, medians; ms; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')})`);
  console.log(['figure', 'measured', 'per stream', 'echo server CPU in the run, µs', 'target', 'AIPerf, same server and requests'].join('\t'));
  for (const [n, xs] of bursts) {
    const t = m(xs, 'ttft99');
    console.log([`TTFT p99, ${n} streams at once`, fmt(t), fmt(t / n), m(xs, 'serverUs').toFixed(0), n === 64 ? '< 1' : '', aiperf ? fmt(m(xs, 'aiperf99')) : ''].join('\t'));
  }
  // The run's fixed part (its /models answer, the pool's warm-up, the warm-up request) cancels in the difference.
  const [lo, hi] = [Math.min(...bursts.keys()), Math.max(...bursts.keys())];
  if (hi > lo) console.log(`echo server CPU per added request (${lo} to ${hi} streams): ${((m(bursts.get(hi), 'serverUs') - m(bursts.get(lo), 'serverUs')) / (hi - lo)).toFixed(0)} µs`);
  console.log([`issue lateness p99, ${FLOOR_REQUESTS} requests at ${RATE_FLOOR}/s`, fmt(m(floor, 'late99')), '', '', ''].join('\t'));
  console.log([`max issue lateness, ${FLOOR_REQUESTS} requests at ${RATE_FLOOR}/s (rounds: ${floor.map((x) => fmt(x.late)).join(', ')})`, fmt(m(floor, 'late')), '', '', '< 1'].join('\t'));
  console.log([`the machine: a loop that only wakes at those arrivals, p99`, fmt(m(floor, 'wake99')), '', '', ''].join('\t'));
  console.log([`the machine: a loop that only wakes at those arrivals, max`, fmt(m(floor, 'wake')), '', '', ''].join('\t'));
  console.log(aiperf ? `AIPerf column: ${aiperf} on the same echo server, the same prompts, one warm-up request (its TTFT counts from when it sent; PBH's from the schedule).` : 'AIPerf: not installed, or AIPERF set empty (see the header of this script): its column skipped.');
  console.log('n streams sent at once queue behind each other on one client loop and one server loop on the same cores: the last first token comes after n requests of both (per stream = p99 / n).');
}

/** 2. PBH beside the bare loop and AIPerf, round by round, each round on a fresh transformers serve process. */
async function compareWithBare() {
  // A copy of the folder with a plain chat template.
  const served = path.join(work, MODEL);
  cpSync(folder, served, { recursive: true });
  const tc = path.join(served, 'tokenizer_config.json');
  writeFileSync(tc, JSON.stringify({ ...JSON.parse(readFileSync(tc, 'utf8')), chat_template: "{% for m in messages %}{{ m['content'] }}{% endfor %}" }));
  const hfPrompts = promptsFile('hf', PROMPTS);
  const hfTexts = textsOf(PROMPTS);
  const clients = { pbh: [], bare: [], ...(aiperf ? { aiperf: [] } : {}) };
  for (let r = 0; r < ROUNDS; r++) {
    // A fresh server each round: a long-lived transformers serve process stopped answering partway through longer
    // runs (docs/measurements.md); the clients of a round share its state, so each round's ratios are paired.
    const port = await freePort();
    await start(path.join(root, '.venv', 'bin', 'transformers'), ['serve', '--device', 'cpu', '--host', '127.0.0.1', '--port', String(port), '--force_model', served], /Application startup complete|Uvicorn running/);
    const server = children.at(-1);
    const base = `http://127.0.0.1:${port}/v1`;
    const run = {
      pbh: () => {
        const row = pbhRun(`hf-${r}`, hfPrompts, { base_url: base, model: served, endpoint: 'chat' }, { kind: 'server', target_qps: RATE }, CONCURRENCY, MAX_NEW);
        return { ttft: row.ttft_p50_ms, tpot: row.tpot_p50_ms };
      },
      bare: () => bare(base, served, hfTexts),
      aiperf: () => aiperfPaired(base, served, hfTexts, r),
    };
    // The server loads the model at its first request and warms over the next few: one discarded pass first.
    bare(base, served, hfTexts);
    // The clients take turns going first, round by round.
    const names = Object.keys(clients);
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length];
      clients[name].push(run[name]());
    }
    server.removeAllListeners('exit');
    await new Promise((resolve) => {
      server.once('exit', resolve);
      server.kill();
    });
  }
  const within = (ratio) => (Math.abs(ratio - 1) <= TOLERANCE_SHARE ? 'yes' : 'no');
  const others = Object.keys(clients).filter((c) => c !== 'pbh');
  console.log(`\ntransformers serve (${MODEL}, chat, CPU): ${PROMPTS} prompts at ${RATE} req/s, ${CONCURRENCY} in flight, ${MAX_NEW} new tokens, a fresh server each of ${ROUNDS} rounds; p50s in ms (median over rounds), ratio = median over rounds of PBH / the other client in that round`);
  console.log(['figure', 'pbh', ...others.flatMap((c) => [c, 'ratio', 'within'])].join('\t'));
  for (const [name, k] of [['TTFT p50', 'ttft'], ['TPOT p50', 'tpot']]) {
    const cells = others.flatMap((c) => {
      const ratio = median(clients.pbh.map((x, r) => x[k] / clients[c][r][k]));
      return [fmt(m(clients[c], k)), fmt(ratio), within(ratio)];
    });
    console.log([name, fmt(m(clients.pbh, k)), ...cells].join('\t'));
  }
  console.log(`per round, TTFT / TPOT p50 ms: ${Object.entries(clients).map(([c, xs]) => `${c} ${xs.map((x) => `${fmt(x.ttft)} / ${fmt(x.tpot)}`).join(', ')}`).join('; ')}`);
  console.log(`target within ${TOLERANCE_SHARE * 100}%; ${aiperf ? `AIPerf: ${aiperf}` : 'AIPerf: not installed (see the header of this script), skipped'}`);
}

try {
  // 1. The client's floor on the echo server.
  const said = await start(python, [path.join(root, 'scripts', 'openai_echo_server.py'), '--port', '0'], /listening on (\S+)\n/);
  const echo = /listening on (\S+)\n/.exec(said)[1];
  const echoPid = children.at(-1).pid;
  const paced = promptsFile('paced', FLOOR_REQUESTS);
  // Streams that last: each chunk ITL_MS after the last, so at STEADY_RATE about STEADY_IN_FLIGHT are open at a time.
  const slow = /listening on (\S+)\n/.exec(await start(python, [path.join(root, 'scripts', 'openai_echo_server.py'), '--port', '0', '--itl-ms', String(ITL_MS)], /listening on (\S+)\n/))[1];
  const steadyRate = (STEADY_IN_FLIGHT * 1000) / (ITL_MS * (MAX_NEW - 1));
  const steadyCount = Math.max(1, Math.round(steadyRate * STEADY_S));
  const steadyPrompts = promptsFile('steady', steadyCount);
  const steadyArrivals = sessionArrivalsNs(steadyCount, steadyRate);
  const steady = [];
  const bursts = new Map(STREAMS.map((n) => [n, []]));
  const floor = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const n of STREAMS) {
      // Every request arrives at once (a rate far above the stream count): n in flight together, none queued.
      const before = cpuNs(echoPid);
      const row = pbhRun(`floor-${n}-${r}`, promptsFile(`streams-${n}`, n), { base_url: echo }, { kind: 'server', target_qps: 1e7 }, n, MAX_NEW);
      const serverUs = (cpuNs(echoPid) - before) / 1e3;
      // AIPerf's own client on the same server and requests, all at once (its TTFT from when it sent, not from a schedule).
      const other = aiperf ? aiperfRun(`floor-${n}-${r}`, echo, 'echo', textsOf(n), null, n, 1).time_to_first_token.p99 : NaN;
      bursts.get(n).push({ ttft99: row.ttft_p99_ms, serverUs, aiperf99: other });
    }
    const pacedRow = pbhRun(`floor-paced-${r}`, paced, { base_url: echo }, { kind: 'server', target_qps: RATE_FLOOR }, Math.max(...STREAMS), MAX_NEW);
    const steadyRow = pbhRun(`floor-steady-${r}`, steadyPrompts, { base_url: slow }, { kind: 'server', target_qps: steadyRate }, 2 * STEADY_IN_FLIGHT, MAX_NEW);
    const other = aiperf ? aiperfRun(`floor-steady-${r}`, slow, 'echo', textsOf(steadyCount), steadyArrivals, 2 * STEADY_IN_FLIGHT, 1).time_to_first_token.p99 : NaN;
    steady.push({ ttft99: steadyRow.ttft_p99_ms, late99: steadyRow.late_p99_ms, aiperf99: other });
    const wake = wakeLoop();
    floor.push({ late99: pacedRow.late_p99_ms, late: pacedRow.late_max_ms, wake99: quantile(wake, 0.99), wake: Math.max(...wake) });
  }
  printFloor(bursts, floor);
  console.log([`TTFT p99, about ${STEADY_IN_FLIGHT} streams open (${steadyRate.toFixed(0)} req/s for ${STEADY_S} s, ${MAX_NEW} chunks ${ITL_MS} ms apart)`, fmt(m(steady, 'ttft99')), '', '', '< 1', aiperf ? fmt(m(steady, 'aiperf99')) : ''].join('\t'));
  console.log([`issue lateness p99 in that run`, fmt(m(steady, 'late99')), '', '', ''].join('\t'));
  if (process.env.FLOOR_ONLY !== '1') await compareWithBare();
} finally {
  for (const c of children) c.kill();
}
