#!/usr/bin/env node
// npm run bench:llm — PBH's TTFT and TPOT on each LLM engine beside a bare loop over that engine's own API
// (scripts/llm_bare_loop.py: transformers' forward steps and its generate with a streamer, a hand-fed ONNX Runtime session and OpenVINO
// compiled model on the Optimum export (openvino-onnx: the openvino engine on that export), optimum-intel's stateful IR
// hand-fed (openvino: the IR the engine exported from the Hugging Face folder), ONNX Runtime
// GenAI's generate_next_token loop, OpenVINO GenAI's ContinuousBatchingPipeline stepped one request at a time on the IR
// the engine ran, llama-cpp-python's Llama.generate on the GGUF the llama-cpp engine converted; each warmed by one
// request), on the same model, prompt ids, output length and threads, in rounds that alternate which goes first.
// Every figure is each side's best run's p50 (PBH's percentile on both sides), in ms; beside each ratio, the median over
// rounds of that round's PBH / bare, its two runs back to back.
// Needs `npm run build`, the venv with torch and the LLM packages (npx pbh doctor --fix --engine pytorch --engine llm,
// and --engine llama-cpp for llama-cpp)
// and the LLMs of python/generate_llms.py (built here when missing). Knobs: MODELS (llama_gqa,gpt2,qwen2,phi3), ENGINES, THREADS (1),
// ROUNDS (3), MAX_NEW (32), PROMPTS (8), AA (1: the bare loop on both sides, in the same alternation: the bench's own spread
// across processes, an A/A control for the 3% target).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { percentile } from '../packages/core/dist/stats/summary.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = path.join(root, '.venv', 'bin', 'python');
const pbh = path.join(root, 'packages', 'core', 'dist', 'cli', 'main.js');
const llms = path.join(root, '.cache', 'llms');
const MODELS = (process.env.MODELS ?? 'llama_gqa,gpt2,qwen2,phi3').split(',');
const ENGINES = (process.env.ENGINES ?? 'onnxruntime,openvino,openvino-onnx,transformers,transformers-generate,onnxruntime-genai,openvino-genai,llama-cpp').split(',');
const THREADS = Number(process.env.THREADS ?? 1);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const MAX_NEW = Number(process.env.MAX_NEW ?? 32);
const PROMPTS = Number(process.env.PROMPTS ?? 8);
const AA = process.env.AA === '1';
// Target: PBH's figure within 3% of the bare loop's.
const TOLERANCE_SHARE = 0.03;
const THREAD_OPTION = { onnxruntime: 'intraOpNumThreads', openvino: 'threads', 'openvino-onnx': 'threads', transformers: 'threads', 'transformers-generate': 'threads', 'onnxruntime-genai': 'threads', 'openvino-genai': 'threads', 'llama-cpp': 'threads' };
// The bare loop over the API each engine times: transformers' forward steps for the transformers engine, its generate
// for transformers-generate; the others by their own name.
const BARE_LOOP = { transformers: 'transformers-steps', 'transformers-generate': 'transformers' };
// openvino-onnx: the openvino engine on the model's Optimum ONNX export (python/generate_llms.py's) instead of its Hugging
// Face folder, which it runs as optimum-intel's IR.
const ENGINE_OF = { 'openvino-onnx': 'openvino' };
const MODEL_OF = { 'openvino-onnx': path.join('onnx', 'model.onnx') };
const unknown = ENGINES.filter((e) => !(e in THREAD_OPTION));
if (unknown.length) {
  console.error(`ENGINES names ${unknown.join(', ')}: bench:llm has a bare loop for ${Object.keys(THREAD_OPTION).join(', ')} only`);
  process.exit(2);
}

const work = mkdtempSync(path.join(os.tmpdir(), 'pbh-bench-llm-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
// The bare loop's per-request figures go through PBH's one percentile, so both sides are the same order statistic.
const p50 = (xs) => percentile([...xs].sort((a, b) => a - b), 0.5);
const convertCache = path.join(root, '.cache', 'converted-onnx');
const env = { ...process.env, USE_TF: '0', PYTHONPATH: path.join(root, 'python'), PBH_CONVERT_CACHE: convertCache };

function pbhRun(model, engine, round) {
  const config = path.join(work, `${model}-${engine}-${round}.json`);
  const db = path.join(work, `${model}-${engine}-${round}.duckdb`);
  writeFileSync(
    config,
    JSON.stringify({
      name: 'bench-llm',
      dataset: { kind: 'text', prompts: path.join(llms, 'data', 'prompts.jsonl'), limit: PROMPTS },
      models: [{ name: model, path: path.join(llms, model, MODEL_OF[engine] ?? 'hf') }],
      generate: { max_new_tokens: MAX_NEW, gate_prompts: 0, perplexity: false },
      engines: [{ name: ENGINE_OF[engine] ?? engine, process: 'worker', options: { [THREAD_OPTION[engine]]: THREADS } }],
      batch_sizes: [1],
      warmup_batches: 2,
      sessions: 1,
    }),
  );
  execFileSync('node', [pbh, 'run', config, '--db', db], { stdio: ['ignore', 'ignore', 'inherit'], env });
  const sql = `SELECT g.ttft_p50_ms, g.tpot_p50_ms, p.engine_facts FROM generation g JOIN profiles p USING (profile_id)`;
  const out = execFileSync('node', [pbh, 'query', '--db', db, '--format', 'json', sql], { env }).toString();
  const [row] = JSON.parse(out);
  if (!row) throw new Error(`${model} on ${engine}: no generate Profile stored (see the run above)`);
  return row;
}

/** The folder of PBH's ONNX export of the model (a cache hit after PBH's run), for the hand-fed ONNX Runtime loop. */
function exportFolder(model) {
  const out = execFileSync(python, ['-m', 'model_convert', '--cache', convertCache, '--from', 'transformers', path.join(llms, model, 'hf')], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  return path.dirname(JSON.parse(out.toString().trim().split('\n').at(-1)).onnx_path);
}

function bare(model, engine, folder, promptsFile) {
  const out = execFileSync(python, [path.join(root, 'scripts', 'llm_bare_loop.py'), BARE_LOOP[engine] ?? engine, folder, promptsFile, String(MAX_NEW), String(THREADS)], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const { ttft_ms: ttft, tpot_ms: tpot } = JSON.parse(out.toString().trim().split('\n').at(-1));
  return { ttft: p50(ttft), tpot: p50(tpot) };
}

function tokenIds(model) {
  const texts = readFileSync(path.join(llms, 'data', 'prompts.jsonl'), 'utf8').split('\n').filter(Boolean).slice(0, PROMPTS).map((l) => JSON.parse(l).prompt);
  const request = JSON.stringify({ tokenizer: path.join(llms, model, 'hf', 'tokenizer.json'), prompts: texts, held_out: null, window: 2 });
  const answer = JSON.parse(execFileSync(python, ['-m', 'tokenize_text'], { input: request, env }).toString());
  const file = path.join(work, `${model}-prompts.json`);
  writeFileSync(file, JSON.stringify(answer.prompts));
  return file;
}

// The LLMs of python/generate_llms.py, built here when missing (as bench:litert builds its models).
if (!existsSync(path.join(llms, 'llms.json'))) execFileSync(python, [path.join(root, 'python', 'generate_llms.py')], { stdio: ['ignore', 'ignore', 'inherit'] });

const rows = [];
for (const model of MODELS) {
  const promptsFile = tokenIds(model);
  for (const engine of ENGINES) {
    const pbhFigures = [];
    const bareFigures = [];
    let folder = null;
    try {
      const runPbh = (r) => {
        if (AA && folder) return void pbhFigures.push(bare(model, engine, folder, promptsFile));
        const row = pbhRun(model, engine, r);
        const facts = () => JSON.parse(row.engine_facts);
        folder ??= engine.startsWith('transformers') ? path.join(llms, model, 'hf') : ['onnxruntime-genai', 'openvino-genai', 'openvino'].includes(engine) ? facts().folder : engine === 'llama-cpp' ? facts().gguf : engine === 'openvino-onnx' ? path.join(llms, model, 'onnx') : exportFolder(model);
        // With AA, round 0's PBH run only finds the folder; the bare loop takes its place.
        pbhFigures.push(AA ? bare(model, engine, folder, promptsFile) : { ttft: row.ttft_p50_ms, tpot: row.tpot_p50_ms });
      };
      // Even rounds run PBH first (round 0 also finds the folder the bare loop reads), odd rounds the bare loop.
      for (let r = 0; r < ROUNDS; r++) {
        if (r % 2 === 0) runPbh(r);
        bareFigures.push(bare(model, engine, folder, promptsFile));
        if (r % 2 === 1) runPbh(r);
      }
    } catch (e) {
      rows.push({ model, engine, error: e.message.split('\n')[0] });
      continue;
    }
    // Each side's best run: on a shared VM a vCPU slows by up to 2x for seconds at a time, and which side a slow spell
    // lands on decides a median of runs; interference only adds time, so the fastest run reads each loop's own cost
    // (Chen and Revels, "Robust benchmarking in noisy environments", 2016). The paired median is printed beside it.
    const best = (xs, k) => Math.min(...xs.map((x) => x[k]));
    const perRound = (k) => pbhFigures.map((p, r) => p[k] / bareFigures[r][k]);
    const paired = (k) => median(perRound(k));
    const row = { model, engine, pbh_ttft: best(pbhFigures, 'ttft'), bare_ttft: best(bareFigures, 'ttft'), pbh_tpot: best(pbhFigures, 'tpot'), bare_tpot: best(bareFigures, 'tpot') };
    row.ttft_ratio = row.pbh_ttft / row.bare_ttft;
    row.tpot_ratio = row.pbh_tpot / row.bare_tpot;
    row.ttft_paired = paired('ttft');
    row.tpot_paired = paired('tpot');
    const shown = (k) => perRound(k).map((x) => x.toFixed(3)).join(' ');
    console.error(`${model} ${engine}: per round, PBH / bare TTFT ${shown('ttft')}; TPOT ${shown('tpot')}`);
    row.within = Math.abs(row.ttft_ratio - 1) <= TOLERANCE_SHARE && Math.abs(row.tpot_ratio - 1) <= TOLERANCE_SHARE;
    rows.push(row);
  }
}

const fmt = (x) => (typeof x === 'number' ? x.toFixed(3) : String(x ?? ''));
if (AA) console.log('AA: both sides are the bare loop; "pbh" reads the side in PBH\'s place');
console.log(`threads ${THREADS}, ${PROMPTS} prompts, ${MAX_NEW} new tokens, ${ROUNDS} rounds; ms, each side's best run's p50; ratio = PBH / bare, paired = median of per-round ratios (target: ratio within ${TOLERANCE_SHARE * 100}%)`);
console.log(['model', 'engine', 'TTFT pbh', 'TTFT bare', 'ratio', 'paired', 'TPOT pbh', 'TPOT bare', 'ratio', 'paired', 'within'].join('\t'));
for (const r of rows) {
  if (r.error) console.log([r.model, r.engine, `error: ${r.error}`].join('\t'));
  else console.log([r.model, r.engine, fmt(r.pbh_ttft), fmt(r.bare_ttft), fmt(r.ttft_ratio), fmt(r.ttft_paired), fmt(r.pbh_tpot), fmt(r.bare_tpot), fmt(r.tpot_ratio), fmt(r.tpot_paired), r.within ? 'yes' : 'no'].join('\t'));
}
