import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Profile } from '../../src/contracts/profile.js';
import { SITE_DATA_VERSION, SiteDataSchema, fullProfile, readSiteData } from '../../src/publish/index.js';
import { StoreLockedError, StoreNotFoundError, openStore, runQuery } from '../../src/store/index.js';
import { makeProfile, runStart, statsOf, tempDir } from '../store/profile-fixture.js';

let dir: string;
let cleanup: () => void;

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

const small = { sessions: 3, batchesPerSession: 20 };

/**
 * The fixture as the harness now writes a Profile: the engine boundary as the headline and transport
 * (predict - engine per batch) beside it, optionally a precision the runtime did not honour.
 */
function headlined(profile: Profile, precision?: { requested: 'bf16'; executed: 'fp32' }): Profile {
  const engine = profile.samples.filter((s) => s.boundary === 'engine');
  const predict = profile.samples.filter((s) => s.boundary === 'predict');
  const transport = predict.map((s, i) => ({ ...s, boundary: 'transport' as const, ns: s.ns - engine[i]!.ns }));
  const measured = transport.length > 0;
  return {
    ...profile,
    engine: {
      ...profile.engine,
      ...(precision && { precision: { model: 'fp32', ...precision, evidence: 'INFERENCE_PRECISION_HINT=bf16 set, compiled model reports f32' } }),
    },
    headline_boundary: measured ? 'engine' : null,
    latency: measured ? { ...profile.latency, transport: statsOf(transport.map((s) => s.ns)) } : profile.latency,
    samples: [...profile.samples, ...transport],
  };
}

const SERVER_REASONS = [
  'p99 latency 5.210 ms exceeds the latency bound 5 ms at 500 queries/s: lower target_qps',
  'early stopping: 9 of 600 queries over 5 ms; needs at least 1200 queries for that to pass',
];

/**
 * The fixture as the harness writes a server Profile: an engine entry labelled ort-server, per-query latencies from
 * scheduled arrival (here predict plus a queueing delay) as the one timed boundary and the headline, and the
 * scenario's verdict with its reasons and peak search.
 */
function served(profile: Profile): Profile {
  const query = profile.samples.filter((s) => s.boundary === 'predict').map((s) => ({ ...s, boundary: 'query' as const, ns: s.ns + 1_500_000 }));
  const measured = query.length > 0;
  const stats = statsOf(query.map((s) => s.ns));
  return {
    ...profile,
    engine: { ...profile.engine, label: 'ort-server' },
    workload: { ...profile.workload, scenario: 'server' },
    headline_boundary: measured ? 'query' : null,
    scenario: measured
      ? {
          kind: 'server',
          rules: 'pbh',
          settings: { target_qps: 500, latency_bound_ms: 5, find_peak: true },
          executor: 'harness',
          validity: 'INVALID',
          reasons: SERVER_REASONS,
          reported: { name: 'p99_latency_ms', value: stats.p99 / 1e6, unit: 'ms' },
          early_stopping_ms: null,
          issue_delay: statsOf([10_000, 20_000, 1_400_000]),
          peak_search: [
            { target_qps: 500, validity: 'VALID', p99_ms: 3.1, reasons: [] },
            { target_qps: 1000, validity: 'INVALID', p99_ms: 7.9, reasons: [SERVER_REASONS[0]!] },
          ],
          mlperf: { validity: 'INVALID', reasons: ["every session: ran 0.3 s; MLPerf's rules need at least 600 s (min_duration_ms)"] },
        }
      : null,
    latency: measured ? { query: stats } : {},
    sessions: profile.sessions.map((s) => ({ ...s, latency: { query: statsOf(query.filter((q) => q.session === s.index).map((q) => q.ns)) } })),
    samples: query,
  };
}

/**
 * Two runs: two ok Profiles of one model at different speeds, a failed one, and an ok one of another model; in run 2
 * an ok server Profile of the first model (ranked in its own scenario) and a server one that timed out after measuring.
 */
async function writeStore(file: string) {
  const profiles = [
    makeProfile({ profileId: 'slow', runId: 'run-1', engine: 'tvm', meanNs: 400_000, ...small }),
    headlined(makeProfile({ profileId: 'fast', runId: 'run-1', engine: 'onnxruntime', meanNs: 200_000, ...small })),
    makeProfile({ profileId: 'broken', runId: 'run-1', engine: 'openvino', status: 'failed', ...small }),
    headlined(makeProfile({ profileId: 'other', runId: 'run-2', model: 'resnet50', engine: 'openvino', ...small }), { requested: 'bf16', executed: 'fp32' }),
    // Ran out of time after measuring: not on the leaderboard view, yet its latencies are published like an ok row's.
    { ...headlined(makeProfile({ profileId: 'late', runId: 'run-2', model: 'resnet50', ...small })), status: 'timeout' as const, error: 'timed out after 300 s' },
    served(makeProfile({ profileId: 'server', runId: 'run-2', meanNs: 100_000, ...small })),
    { ...served(makeProfile({ profileId: 'server-late', runId: 'run-2', ...small })), status: 'timeout' as const, error: 'timed out after 300 s' },
  ];
  const store = await openStore(file);
  try {
    await store.beginRun(runStart('run-1'));
    await store.beginRun({ ...runStart('run-2'), started_at: '2026-03-02T10:00:00.000Z' });
    for (const profile of profiles) await store.writeProfile(profile);
    await store.finishRun('run-1', '2026-03-01T11:00:00.000Z');
  } finally {
    await store.close();
  }
  return profiles;
}

describe('readSiteData', () => {
  it('publishes every Profile, run and sample of a real store, satisfying the versioned contract', async () => {
    const file = join(dir, 'results.duckdb');
    const written = await writeStore(file);
    const data = await readSiteData(file);

    expect(SiteDataSchema.parse(data)).toEqual(data);
    expect(data.version).toBe(SITE_DATA_VERSION);
    expect(data.db_file).toBe('results.duckdb');
    expect(data.runs.map((r) => [r.run_id, r.profiles, r.finished_at])).toEqual([
      ['run-1', 3, '2026-03-01T11:00:00.000Z'],
      ['run-2', 4, null],
    ]);
    expect(data.profiles.map((p) => p.profile_id).sort()).toEqual(['broken', 'fast', 'late', 'other', 'server', 'server-late', 'slow']);

    const byId = new Map(data.profiles.map((p) => [p.profile_id, p]));
    const fast = byId.get('fast')!;
    expect(fast).toMatchObject({ status: 'ok', run_name: 'sparsity-study', engine_name: 'onnxruntime', cpu_model: written[1]!.system.cpu_model });
    expect(fast.gpus).toEqual(written[1]!.system.gpus);
    expect(fast.session_throughputs).toEqual(written[1]!.sessions.map((s) => s.throughput_sps));
    expect(fast.predict_p50_ms).toBeCloseTo(written[1]!.latency.predict!.p50 / 1e6, 9);
  });

  it('ranks ok Profiles within model, batch size, scenario, precision and hardware as the leaderboard view does, and leaves the others unranked', async () => {
    const file = join(dir, 'results.duckdb');
    await writeStore(file);
    const ranks = Object.fromEntries((await readSiteData(file)).profiles.map((p) => [p.profile_id, p.rank_in_group]));
    // The server Profile is the fastest of its model, yet ranks in its own scenario: fast keeps first place in offline.
    expect(ranks).toEqual({ fast: 1, slow: 2, broken: null, other: 1, late: null, server: 1, 'server-late': null });
  });

  it('publishes scenario, verdict, reasons, reported figure and engine entry, and a query headline for every status', async () => {
    const file = join(dir, 'results.duckdb');
    const written = new Map((await writeStore(file)).map((p) => [p.profile_id, p]));
    const byId = new Map((await readSiteData(file)).profiles.map((p) => [p.profile_id, p]));
    for (const id of ['server', 'server-late']) {
      const query = written.get(id)!.latency.query!;
      expect(byId.get(id), id).toMatchObject({
        engine_name: 'onnxruntime', engine_label: 'ort-server', engine_entry: 'ort-server',
        scenario: 'server', validity: 'INVALID', validity_reasons: SERVER_REASONS,
        scenario_metric: 'p99_latency_ms', scenario_value: query.p99 / 1e6,
        headline_boundary: 'query', latency_boundary: 'query',
      });
      for (const stat of ['p50', 'p99'] as const) {
        expect(byId.get(id)![`${stat}_ms`], `${id} ${stat}`).toBeCloseTo(query[stat] / 1e6, 9);
        expect(byId.get(id)![`query_${stat}_ms`], `${id} ${stat}`).toBeCloseTo(query[stat] / 1e6, 9);
      }
    }
    expect(byId.get('server')!.profile.scenario).toEqual(written.get('server')!.scenario);
    // Unlabelled entries are their engine; Profiles without a scenario result have no verdict.
    expect(byId.get('fast')).toMatchObject({ engine_label: null, engine_entry: 'onnxruntime', scenario: 'offline', validity: null, validity_reasons: null, scenario_metric: null, scenario_value: null });
    expect(byId.get('broken')).toMatchObject({ engine_entry: 'openvino', validity: null, p50_ms: null });

    // Every ok row carries exactly the leaderboard view's scenario, verdict and entry.
    const store = await openStore(file, { readOnly: true });
    try {
      const view = await runQuery(store, 'SELECT profile_id, scenario, validity, scenario_metric, scenario_value, engine_entry, rank_in_group, hardware FROM leaderboard');
      expect(view.rows.map((r) => r[0]).sort()).toEqual(['fast', 'other', 'server', 'slow']);
      for (const [id, scenario, validity, metric, value, entry, rank, hardware] of view.rows) {
        expect(byId.get(String(id))).toMatchObject({ scenario, validity, scenario_metric: metric, scenario_value: value, engine_entry: entry, rank_in_group: rank, hardware });
      }
    } finally {
      await store.close();
    }
  });

  it('publishes precision asked for and executed, and the headline latency as the leaderboard view defines it', async () => {
    const file = join(dir, 'results.duckdb');
    const written = new Map((await writeStore(file)).map((p) => [p.profile_id, p]));
    const byId = new Map((await readSiteData(file)).profiles.map((p) => [p.profile_id, p]));
    const ms = (id: string, boundary: 'engine' | 'predict' | 'transport', stat: 'p50' | 'p99') => written.get(id)!.latency[boundary]![stat] / 1e6;

    expect(byId.get('other')).toMatchObject({ precision: 'fp32', precision_requested: 'bf16', headline_boundary: 'engine', latency_boundary: 'engine' });
    expect(byId.get('fast')).toMatchObject({ precision: 'fp32', precision_requested: 'fp32' });
    for (const id of ['fast', 'other', 'late']) {
      const p = byId.get(id)!;
      expect(p.p50_ms, id).toBeCloseTo(ms(id, 'engine', 'p50'), 9);
      expect(p.p99_ms, id).toBeCloseTo(ms(id, 'engine', 'p99'), 9);
      expect(p.engine_p99_ms, id).toBeCloseTo(ms(id, 'engine', 'p99'), 9);
      expect(p.transport_p50_ms, id).toBeCloseTo(ms(id, 'transport', 'p50'), 9);
    }
    // A Profile without a headline is ranked by predict, and says so.
    expect(byId.get('slow')).toMatchObject({ headline_boundary: null, latency_boundary: 'predict', transport_p50_ms: null });
    expect(byId.get('slow')!.p50_ms).toBeCloseTo(ms('slow', 'predict', 'p50'), 9);
    expect(byId.get('broken')).toMatchObject({ p50_ms: null, p99_ms: null, precision: 'fp32', latency_boundary: 'predict' });

    // Every ok row carries exactly the leaderboard view's figures.
    const store = await openStore(file, { readOnly: true });
    try {
      const view = await runQuery(store, 'SELECT profile_id, p50_ms, p99_ms, latency_boundary, precision, precision_requested FROM leaderboard');
      for (const [id, p50, p99, boundary, precision, requested] of view.rows) {
        expect(byId.get(String(id))).toMatchObject({ p50_ms: p50, p99_ms: p99, latency_boundary: boundary, precision, precision_requested: requested });
      }
    } finally {
      await store.close();
    }
  });

  it('reads a Profile stored before schema v2: no precision, headline, transport, label or scenario result', async () => {
    const file = join(dir, 'results.duckdb');
    const written = await writeStore(file);
    const fast = written.find((p) => p.profile_id === 'fast')!;
    // What a migrated v1 row holds: its new columns NULL, its profile_json without the keys v2 added.
    const { headline_boundary: _headline, scenario: _scenario, ...rest } = fast;
    const { precision: _precision, process: _process, label: _label, ...engine } = fast.engine;
    const { samples_scored: _scored, last_batch: _last, ...workload } = fast.workload;
    const { precision: _gate, tolerance_rule: _rule, outputs: _outputs, ...correctness } = fast.correctness!;
    const v1 = { ...rest, engine, workload, correctness };
    const store = await openStore(file);
    try {
      await store.withConnection(async (c) => {
        await c.run(
          `UPDATE profiles SET precision_requested = NULL, precision_executed = NULL, precision_evidence = NULL, engine_process = NULL,
             headline_boundary = NULL, transport_p50_ms = NULL, engine_label = NULL, validity = NULL, validity_reasons = NULL,
             scenario_metric = NULL, scenario_value = NULL, scenario = 'single_stream', profile_json = $1::JSON WHERE profile_id = 'fast'`,
          [JSON.stringify(v1)],
        );
        await c.run(`DELETE FROM samples WHERE profile_id = 'fast' AND boundary = 'transport'`);
      });
    } finally {
      await store.close();
    }
    const old = (await readSiteData(file)).profiles.find((p) => p.profile_id === 'fast')!;
    expect(old).toMatchObject({
      precision: null, precision_requested: null, headline_boundary: null, latency_boundary: 'predict', transport_p50_ms: null,
      engine_label: null, engine_entry: 'onnxruntime', scenario: 'single_stream', validity: null, validity_reasons: null, scenario_value: null,
    });
    expect(old.p50_ms).toBeCloseTo(fast.latency.predict!.p50 / 1e6, 9);
    expect(old.profile.engine).toMatchObject({ precision: null, process: null, label: null });
    expect(old.profile.headline_boundary).toBeNull();
    expect(old.profile.scenario).toBeNull();
    expect(old.profile.workload).toMatchObject({ samples_scored: 0, last_batch: null });
    expect(old.profile.correctness).toMatchObject({ precision: null, tolerance_rule: 'config tolerance', outputs: [] });
    expect(old.samples.boundary).not.toContain('transport');
  });

  it("gives back each Profile exactly as written, raw samples included, under the table's ids", async () => {
    const file = join(dir, 'results.duckdb');
    const written = await writeStore(file);
    const data = await readSiteData(file);
    for (const profile of written) {
      const published = data.profiles.find((p) => p.profile_id === profile.profile_id)!;
      expect(fullProfile(published)).toEqual(profile);
    }

    // A row copied with SQL under a new id (as bench:site replicates runs) keeps the old id inside profile_json.
    const store = await openStore(file);
    try {
      await store.withConnection((c) => c.run(`UPDATE profiles SET profile_id = 'copy' WHERE profile_id = 'other'`));
    } finally {
      await store.close();
    }
    const copied = (await readSiteData(file)).profiles.find((p) => p.profile_id === 'copy')!;
    expect(copied.profile.profile_id).toBe('copy');
  });

  it("orders each Profile's samples by seq however the table holds them, and gives them as typed columns", async () => {
    const file = join(dir, 'results.duckdb');
    const written = await writeStore(file);
    const fast = written.find((p) => p.profile_id === 'fast')!;
    // Reversed seq: the rows lie in the table in the opposite order to the one they must be published in.
    const store = await openStore(file);
    try {
      await store.withConnection((c) => c.run(`UPDATE samples SET seq = ${fast.samples.length - 1} - seq WHERE profile_id = 'fast'`));
    } finally {
      await store.close();
    }
    const data = await readSiteData(file);
    const samples = data.profiles.find((p) => p.profile_id === 'fast')!.samples;
    expect(samples.ns).toBeInstanceOf(Float64Array);
    expect(samples.session).toBeInstanceOf(Int32Array);
    expect(Array.from(samples.ns)).toEqual(fast.samples.map((s) => s.ns).reverse());
    expect(samples.boundary).toEqual(fast.samples.map((s) => s.boundary).reverse());
    // Every other Profile keeps its own samples in its own order.
    for (const profile of written.filter((p) => p.profile_id !== 'fast')) {
      expect(fullProfile(data.profiles.find((p) => p.profile_id === profile.profile_id)!).samples).toEqual(profile.samples);
    }
  });

  it('refuses a value the contract does not allow, naming the file, the row and the Profile', async () => {
    const file = join(dir, 'results.duckdb');
    await writeStore(file);
    const edit = async (sql: string) => {
      const store = await openStore(file);
      try {
        await store.withConnection((c) => c.run(sql));
      } finally {
        await store.close();
      }
    };
    await edit(`UPDATE samples SET ns = 'NaN'::DOUBLE WHERE profile_id = 'fast' AND seq = 3`);
    await expect(readSiteData(file)).rejects.toThrow(/samples read for the site from .*results\.duckdb .*samples row 3 \(by seq\) of Profile fast: ns is NaN, where a finite number is required/);
    await edit(`UPDATE samples SET ns = 1 WHERE profile_id = 'fast' AND seq = 3`);
    await edit(`UPDATE sessions SET throughput_sps = 'Infinity'::DOUBLE WHERE profile_id = 'slow' AND session_index = 1`);
    await expect(readSiteData(file)).rejects.toThrow(/sessions row 1 \(by session_index\) of Profile slow: throughput_sps is Infinity/);
    await edit(`UPDATE sessions SET throughput_sps = 1 WHERE profile_id = 'slow'`);
    await edit(`UPDATE profiles SET precision_executed = 'fp7' WHERE profile_id = 'other'`);
    await expect(readSiteData(file)).rejects.toThrow(/Row \d+ \(Profile other\) read for the site from .*results\.duckdb has an unexpected shape \(.*row\.precision/s);
    await edit(`UPDATE profiles SET precision_executed = 'fp32', throughput_mean = 'NaN'::DOUBLE WHERE profile_id = 'other'`);
    await expect(readSiteData(file)).rejects.toThrow(/Row \d+ read for the site from .*results\.duckdb has an unexpected shape \(not JSON.*NaN/s);
  });

  it('refuses a file a writer holds with the typed lock error, and a missing file with its own', async () => {
    const file = join(dir, 'busy.duckdb');
    const writer = await openStore(file);
    try {
      await expect(readSiteData(file)).rejects.toBeInstanceOf(StoreLockedError);
    } finally {
      await writer.close();
    }
    await expect(readSiteData(join(dir, 'missing.duckdb'))).rejects.toBeInstanceOf(StoreNotFoundError);
  });
});
