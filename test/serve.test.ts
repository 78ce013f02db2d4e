import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findVenvPython } from '../packages/core/src/worker/venv.js';
import { freePort, pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { LLMS, ROOT } from './suite.js';

const MAX_NEW = 8;
const PROMPTS = 8;

interface Row {
  engine: string;
  status: string;
  error: string | null;
  generation: string | null;
  scenario: string | null;
}

/** Starts a server process and waits for `ready` on its output; the server stops with the test file. */
async function start(command: string, args: string[], ready: RegExp, env: Record<string, string> = {}): Promise<{ proc: ResultPromise; said: string }> {
  const proc = execa(command, args, { cwd: ROOT, env, reject: false, all: true, buffer: false });
  let said = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start: ${said.slice(-2000)}`)), 180_000);
    proc.all!.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (ready.test(said)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void proc.then(() => reject(new Error(`${args.join(' ')} exited: ${said.slice(-2000)}`)));
  });
  return { proc, said };
}

function config(name: string, engines: unknown[]): Record<string, unknown> {
  return {
    name,
    dataset: { kind: 'text', prompts: path.join(LLMS, 'data', 'prompts.jsonl'), held_out: path.join(LLMS, 'data', 'held_out.txt'), limit: PROMPTS },
    // The folder gives PBH the model's tokenizer (prompt lengths, output tokens) and its facts.
    models: [{ name: 'llama_gqa', path: path.join(LLMS, 'llama_gqa', 'hf') }],
    // The endpoint's continuation is not compared with the reference engine's ids (its text is re-tokenized).
    generate: { max_new_tokens: MAX_NEW, max_concurrency: 4, slo: { ttft_ms: 10_000, itl_ms: 10_000 }, gate_prompts: 0, perplexity: false },
    engines,
    batch_sizes: [1],
    warmup_batches: 1,
    sessions: 1,
  };
}

async function rows(db: string): Promise<Row[]> {
  return queryJson<Row>(
    db,
    "SELECT coalesce(engine_label, engine_name) AS engine, status, error, json_extract(profile_json, '$.generation')::VARCHAR AS generation, json_extract(profile_json, '$.scenario')::VARCHAR AS scenario FROM profiles ORDER BY created_at",
  );
}

describe('openai engine: OpenAI-compatible endpoints started on loopback', () => {
  const servers: ResultPromise[] = [];
  let echo = '';
  let venv = '';

  beforeAll(async () => {
    venv = findVenvPython()!.python;
    // A no-op when .cache/llms is current.
    const built = await execa(venv, [path.join(ROOT, 'python', 'generate_llms.py')], { cwd: ROOT, reject: false });
    expect(built.exitCode, built.stderr).toBe(0);
    const started = await start(venv, [path.join(ROOT, 'scripts', 'openai_echo_server.py'), '--port', '0', '--itl-ms', '1'], /listening on (\S+)\n/);
    servers.push(started.proc);
    echo = /listening on (\S+)\n/.exec(started.said)![1]!;
  }, 800_000);

  afterAll(() => {
    for (const s of servers) s.kill();
  });

  it('drives the echo server single stream, at a Poisson rate, at a fixed concurrency and to its capacity; a client past its lateness limit makes the point INVALID', async () => {
    const dir = await tempDir('pbh-serve-');
    const db = path.join(dir, 'serve.duckdb');
    const base = { base_url: echo, late_ms: 1000 };
    const file = await writeConfig(dir, 'serve.yaml', config('serve-echo', [
      { name: 'openai', label: 'echo-single', options: base },
      { name: 'openai', label: 'echo-poisson', options: { ...base, endpoint: 'chat' }, scenario: { kind: 'server', target_qps: 50 } },
      // A limit no client meets: every request goes some ns after its arrival.
      { name: 'openai', label: 'echo-strict', options: { ...base, late_ms: 1e-6 }, scenario: { kind: 'server', target_qps: 50 } },
      // A concurrency sweep written as one entry: a Profile per cap, all requests due at once.
      { name: 'openai', label: 'echo', options: base, scenario: 'server', sweep: { max_concurrency: [1, 2] } },
      { name: 'openai', label: 'echo-capacity', options: base, scenario: { kind: 'server', target_qps: 50, find_peak: true } },
    ]));
    const r = await pbh(['run', file, '--db', db], { timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const by = new Map((await rows(db)).map((row) => [row.engine, row]));
    for (const engine of ['echo-single', 'echo-poisson', 'echo-strict', 'echo 1 in flight', 'echo 2 in flight', 'echo-capacity']) {
      const row = by.get(engine)!;
      expect(row, engine).toMatchObject({ status: 'ok' });
      const g = JSON.parse(row.generation!);
      expect(g.served).toBe('server');
      // The folder's tokenizer.json counts " tok" x MAX_NEW.
      expect(g.token_count).toBe('tokenizer');
      expect(g.requests).toBe(PROMPTS);
      expect(g.per_request.every((q: { output_tokens: number; itl_ns: number[] }) => q.output_tokens >= MAX_NEW && q.itl_ns.length === MAX_NEW - 1)).toBe(true);
      expect(g.ttft.p50).toBeGreaterThan(0);
      expect(g.perplexity).toBeNull();
      const s = JSON.parse(row.scenario!);
      expect(s.issue_delay.n).toBe(PROMPTS);
      expect(Object.keys(g.runtime_reported)).toEqual(expect.arrayContaining(['queue_ms', 'issue_late_ms', 'ttfb_ms']));
      if (engine === 'echo-strict') {
        expect(s.validity).toBe('INVALID');
        expect(s.reasons[0]).toMatch(/could not keep the schedule/);
        expect(g.issue.late_requests).toBe(PROMPTS);
      }
    }
    // The capacity search keeps every rate it tried; the capacity is the highest that met the SLOs (null: none did).
    const capacity = by.get('echo-capacity')!;
    expect(capacity).toMatchObject({ status: 'ok' });
    const points: { target_qps: number; validity: string; reasons: string[] }[] = JSON.parse(capacity.scenario!).peak_search;
    const found = JSON.parse(capacity.generation!).capacity;
    expect(points.length).toBeGreaterThanOrEqual(2);
    expect(found.points).toBe(points.length);
    expect(points[0]!.target_qps).toBe(50);
    const valid = points.filter((p) => p.validity === 'VALID').map((p) => p.target_qps);
    expect(found.rate_rps).toBe(valid.length ? Math.max(...valid) : null);
    for (const p of points) expect(p.reasons.length === 0).toBe(p.validity === 'VALID');
    for (const cap of [1, 2]) expect(JSON.parse(by.get(`echo ${cap} in flight`)!.generation!)).toMatchObject({ scenario: 'server', concurrency: cap, request_rate: 1e6 });
    expect(JSON.parse(by.get('echo-poisson')!.generation!)).toMatchObject({ scenario: 'server', request_rate: 50, concurrency: 4 });
  }, 320_000);

  it('drives transformers serve on the Llama folder, counting its streamed text with the model tokenizer', async () => {
    // transformers serve's chat endpoint needs a chat template; the copy gets a plain one (the prompt as is).
    const dir = await tempDir('pbh-serve-hf-');
    const folder = path.join(dir, 'llama_gqa');
    await cp(path.join(LLMS, 'llama_gqa', 'hf'), folder, { recursive: true });
    const tc = path.join(folder, 'tokenizer_config.json');
    await writeFile(tc, JSON.stringify({ ...JSON.parse(await readFile(tc, 'utf8')), chat_template: "{% for m in messages %}{{ m['content'] }}{% endfor %}" }));
    const port = await freePort();
    const started = await start(path.join(path.dirname(venv), 'transformers'), ['serve', '--device', 'cpu', '--host', '127.0.0.1', '--port', String(port), '--force_model', folder], /Uvicorn running|Application startup complete/, { USE_TF: '0' });
    servers.push(started.proc);
    const db = path.join(dir, 'serve.duckdb');
    const options = { base_url: `http://127.0.0.1:${port}/v1`, model: folder, endpoint: 'chat', late_ms: 1000 };
    const file = await writeConfig(dir, 'serve.yaml', config('serve-hf', [
      { name: 'openai', label: 'hf-single', options },
      { name: 'openai', label: 'hf-poisson', options, scenario: { kind: 'server', target_qps: 4 } },
    ]));
    const r = await pbh(['run', file, '--db', db], { timeoutMs: 600_000 });
    expect(r.code, r.stderr).toBe(0);
    for (const row of await rows(db)) {
      expect(row, row.engine).toMatchObject({ status: 'ok' });
      const g = JSON.parse(row.generation!);
      expect(g.token_count).toBe('tokenizer');
      // Re-tokenized text: not always MAX_NEW ids (the server may stop at end of text; a byte split across chunks re-encodes differently).
      expect(g.per_request.every((q: { output_tokens: number }) => q.output_tokens >= 1)).toBe(true);
      expect(g.output_tokens_per_s).toBeGreaterThan(0);
    }
  }, 800_000);
});
