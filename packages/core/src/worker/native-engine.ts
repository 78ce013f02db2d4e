import type { Availability, Engine, Generator, PreparedModel, PrepareRequest, Probes, SampleLibrary, SystemUnderTest } from '../contracts/engine.js';
import type { Precision } from '../contracts/precision.js';
import type { TensorMap } from '../contracts/tensor.js';
import { WorkerClient } from './client.js';
import { WorkerReplyError } from './errors.js';
import type { NamedTensor } from './framing.js';
import { describePythonSearch, findVenvPython, VENV_FIX } from './venv.js';
import { writeTensorFile } from './tensor-file.js';
import { checkSchedule } from '../engine-kit/checks.js';
import { servedTraces } from './served-traces.js';
import { optionsSchemaOf, readManifest, type EngineDeclaration, type Manifest } from './manifest.js';

export interface NativeEngineTimeouts {
  hello: number;
  /** Reading and compiling the model: minutes for large models or tuning compilers. */
  load: number;
  /** Moving the resident batches in (`load_samples`): a large performance set is gigabytes. */
  loadSamples: number;
  /** `infer`, and `run` of one resident batch. */
  infer: number;
  bench: number;
  profile: number;
  /**
   * `run_closed_loop` and `run_schedule` run for as long as the request says (MLPerf's minimum is 600 s): their
   * timeout is the request's own duration (min_duration_ns, or the last arrival) plus this much.
   */
  sessionSlack: number;
  close: number;
}

export const DEFAULT_NATIVE_TIMEOUTS: NativeEngineTimeouts = {
  hello: 60_000,
  load: 20 * 60_000,
  loadSamples: 10 * 60_000,
  infer: 120_000,
  bench: 20 * 60_000,
  profile: 20 * 60_000,
  sessionSlack: 10 * 60_000,
  close: 5_000,
};

/** An Engine whose model runs in a worker. */
export type NativeEngine = Engine;

const probeCache = new Map<string, Promise<Availability>>();

function toWire(batch: TensorMap): NamedTensor[] {
  return Object.entries(batch).map(([name, t]) => ({ name, dtype: t.dtype, dims: t.dims, data: t.data }));
}

function toTensorMap(tensors: NamedTensor[]): TensorMap {
  const map: TensorMap = {};
  for (const t of tensors) map[t.name] = { dtype: t.dtype, dims: t.dims, data: t.data };
  return map;
}

/** The int64 tensor `name` of a session reply, `length` long, as numbers (ns fit in 2^53 for 104 days). */
function int64Column(tensors: NamedTensor[], name: string, length: number, engine: string): number[] {
  const tensor = tensors.find((t) => t.name === name);
  if (!tensor || tensor.dtype !== 'int64' || tensor.dims.length !== 1 || tensor.dims[0] !== length) {
    const got = tensor ? `${tensor.dtype}[${tensor.dims.join(',')}]` : 'nothing';
    throw new Error(`${engine} worker answered ${name} as ${got}, expected int64[${length}]`);
  }
  return Array.from(tensor.data as BigInt64Array, Number);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Every engine a manifest file declares, each the generic worker proxy below. */
export function enginesFromManifest(file: string): NativeEngine[] {
  const manifest = readManifest(file);
  return manifest.engines.map((declaration) => createNativeEngine(manifest, declaration));
}

/**
 * The TypeScript side of every worker engine: an Engine whose model runs in the Python file its manifest entry names,
 * speaking the PBH worker protocol: one process per prepared model, spawned from the project venv.
 */
export function createNativeEngine(manifest: Manifest & { file: string }, declaration: EngineDeclaration): NativeEngine {
  const timeouts = { ...DEFAULT_NATIVE_TIMEOUTS, ...declaration.timeouts };
  const { name, module: runtimeModule, worker: workerScript } = declaration;
  const fix = declaration.fix ?? VENV_FIX;
  const env = { ...declaration.env, PBH_ENGINE_MANIFEST: manifest.file, PBH_ENGINE: name };
  const capabilities = declaration.capabilities;
  // PBH_WORKER_LOG=1 streams every worker's stderr live, for debugging a runtime.
  const onStderr = process.env.PBH_WORKER_LOG ? (chunk: Buffer) => void process.stderr.write(chunk) : undefined;

  const spawn = (python: string, label: string): WorkerClient =>
    WorkerClient.spawn({ python, script: workerScript, env, label, onStderr });

  async function probeOnce(python: string): Promise<Availability> {
    const client = spawn(python, `${name} worker (probe)`);
    try {
      const { header } = await client.call('hello', { require: [runtimeModule] }, [], { timeoutMs: timeouts.hello });
      return {
        available: true,
        version: header.version,
        devices: header.devices,
        details: { python: header.python, pythonExecutable: python, ...header.details },
      };
    } catch (error) {
      if (error instanceof WorkerReplyError && error.kind === 'import_error') {
        return {
          available: false,
          reason: `${name} needs the Python module '${runtimeModule}': ${error.runtimeMessage}`,
          fix,
        };
      }
      return { available: false, reason: `${name} worker did not start: ${errorText(error)}`, fix: `check ${workerScript}; ${fix}` };
    } finally {
      await client.close({ timeoutMs: timeouts.close });
    }
  }

  async function helloAndLoad(client: WorkerClient, req: PrepareRequest) {
    const hello = (await client.call('hello', { require: [runtimeModule] }, [], { timeoutMs: timeouts.hello })).header;
    const fields = {
      model_path: req.model.path,
      batch_size: req.batchSize,
      device: req.device,
      options: req.options,
      inputs: req.inputs,
      precision: req.precision,
      work_dir: req.model.workDir,
      seed: req.seed,
    };
    const load = (await client.call('load', fields, [], { timeoutMs: timeouts.load })).header;
    return { hello, load };
  }

  async function prepare(req: PrepareRequest): Promise<PreparedModel> {
    const location = findVenvPython();
    if (!location) {
      throw new Error(`${name} cannot run ${req.model.name}: ${describePythonSearch()}. Fix: ${fix}`);
    }
    const client = spawn(location.python, `${name} worker (${req.model.name}, batch ${req.batchSize}, ${req.device})`);
    // A cell that times out or is interrupted while the runtime compiles must not leave a worker compiling on.
    const abort = (): void => client.kill(`${name}: the cell was aborted (${errorText(req.signal?.reason)})`);
    if (req.signal?.aborted) abort();
    req.signal?.addEventListener('abort', abort, { once: true });
    const { hello, load } = await helloAndLoad(client, req).catch(async (error: unknown) => {
      await client.close({ timeoutMs: timeouts.close });
      throw new Error(`${name} could not load ${req.model.path} (batch ${req.batchSize}, device ${req.device}): ${errorText(error)}`, {
        cause: error,
      });
    });
    const maxConcurrency = load.max_concurrency;
    const library: SampleLibrary = {
      async load(batches: TensorMap[]): Promise<void> {
        const tensors = batches.flatMap(toWire);
        // Through a /dev/shm file the worker maps in place where one can be written, else on the stream.
        const bytesFile = await writeTensorFile(tensors);
        const { header } = await client.call('load_samples', { batches: batches.length }, tensors, {
          timeoutMs: timeouts.loadSamples,
          ...(bytesFile === undefined ? {} : { bytesFile }),
        });
        const sent = tensors.reduce((n, t) => n + t.data.byteLength, 0);
        if (header.batches !== batches.length || header.bytes !== sent) {
          throw new Error(`${name} worker kept ${header.batches} batches (${header.bytes} bytes) of the ${batches.length} (${sent} bytes) sent`);
        }
      },
      async unload(): Promise<void> {
        await client.call('unload_samples', {}, [], { timeoutMs: timeouts.infer });
      },
    };
    const sut: SystemUnderTest = {
      async closedLoop(request) {
        const fields = { batches: request.batches, min_queries: request.minQueries, min_duration_ns: request.minDurationNs };
        const timeoutMs = request.minDurationNs / 1e6 + timeouts.sessionSlack;
        const { header, tensors } = await client.call('run_closed_loop', fields, [], { timeoutMs });
        return { engineNs: int64Column(tensors, 'engine_ns', header.queries, name), wallNs: header.wall_ns };
      },
      async schedule(schedule) {
        checkSchedule(schedule, maxConcurrency, name);
        const queries = schedule.batches.length;
        // Raw tensors, not JSON: a server schedule is hundreds of thousands of queries.
        const tensors: NamedTensor[] = [
          { name: 'batches', dtype: 'int32', dims: [queries], data: Int32Array.from(schedule.batches) },
          // Arrivals drawn from a distribution are fractional ns; the worker's clock counts whole ones.
          { name: 'arrivals_ns', dtype: 'int64', dims: [queries], data: BigInt64Array.from(schedule.arrivalsNs, (ns) => BigInt(Math.round(ns))) },
        ];
        // Arrivals are in issue order (the worker refuses others), so the last one is the schedule's length.
        const timeoutMs = schedule.arrivalsNs[queries - 1]! / 1e6 + timeouts.sessionSlack;
        const reply = await client.call('run_schedule', { concurrency: schedule.concurrency }, tensors, { timeoutMs });
        if (reply.header.queries !== queries) throw new Error(`${name} worker ran ${reply.header.queries} of the schedule's ${queries} queries`);
        return {
          issuedNs: int64Column(reply.tensors, 'issued_ns', queries, name),
          completedNs: int64Column(reply.tensors, 'completed_ns', queries, name),
        };
      },
      async issue(index) {
        const { header } = await client.call('run', { index }, [], { timeoutMs: timeouts.infer });
        return { engineNs: BigInt(header.engine_ns) };
      },
      async infer(batch) {
        const { header, tensors } = await client.call('infer', {}, toWire(batch), { timeoutMs: timeouts.infer });
        return { outputs: toTensorMap(tensors), engineNs: BigInt(header.engine_ns) };
      },
    };
    const probes: Probes = {
      modelOnly: capabilities.modelOnly
        ? async (batch, iterations) => ({ iterationNs: (await client.call('bench', { iterations }, toWire(batch), { timeoutMs: timeouts.bench })).header.iteration_ns })
        : null,
      layers: capabilities.layers
        ? async (batch, iterations) => (await client.call('profile', { iterations }, toWire(batch), { timeoutMs: timeouts.profile })).header.layers
        : null,
      memory: async () => ({ rssBytes: client.rssPeakBytes ?? 0 }),
    };
    // A runtime whose generate loop is its own (capability stream, batchStream or serve, no decoder) gives no logits to score.
    const ownLoop = Boolean(capabilities.stream || capabilities.batchStream || capabilities.serve) && !capabilities.decoder;
    const generator: Generator = {
      serves: capabilities.serve ? 'server' : capabilities.batchStream ? 'batched' : capabilities.stream ? 'one_at_a_time' : 'interleaved',
      async generate(schedule) {
        const n = schedule.prompts.length;
        const tensors: NamedTensor[] = [
          { name: 'prompt_tokens', dtype: 'int64', dims: [schedule.prompts.reduce((a, p) => a + p.length, 0)], data: BigInt64Array.from(schedule.prompts.flat(), (t) => BigInt(t)) },
          { name: 'prompt_lengths', dtype: 'int64', dims: [n], data: BigInt64Array.from(schedule.prompts, (p) => BigInt(p.length)) },
          ...(schedule.arrivalsNs ? [{ name: 'arrivals_ns', dtype: 'int64' as const, dims: [n], data: BigInt64Array.from(schedule.arrivalsNs, (ns) => BigInt(Math.round(ns))) }] : []),
        ];
        const fields = { max_new_tokens: schedule.maxNewTokens, concurrency: schedule.concurrency, cache_shape: schedule.cacheShape, ...(schedule.promptTexts ? { prompt_texts: schedule.promptTexts.slice(0, n) } : {}) };
        const timeoutMs = (schedule.arrivalsNs?.[n - 1] ?? 0) / 1e6 + timeouts.sessionSlack;
        const reply = await client.call('generate', fields, tensors, { timeoutMs });
        if (capabilities.serve) return servedTraces(reply, n, name);
        const k = schedule.maxNewTokens;
        const arrival = int64Column(reply.tensors, 'arrival_ns', n, name);
        const tokens = int64Column(reply.tensors, 'tokens', n * k, name);
        const tokenNs = int64Column(reply.tensors, 'token_ns', n * k, name);
        const figures = reply.header.runtime_figures;
        // A batching runtime on a schedule: how late the worker's loop added each request, judged like a server's client.
        const limitNs = reply.header.issue?.late_threshold_ns;
        return arrival.map((arrivalNs, r) => ({
          arrivalNs,
          tokens: tokens.slice(r * k, (r + 1) * k),
          tokenNs: tokenNs.slice(r * k, (r + 1) * k),
          ...(figures?.[r] ? { runtime: figures[r] } : {}),
          ...(limitNs === undefined ? {} : { issue: { lateNs: (figures?.[r]?.['issue_late_ms'] ?? 0) * 1e6, limitNs } }),
        }));
      },
      rankTokens: ownLoop
          ? null
          : async (prompt, continuation) => {
              const int64 = (name: string, values: number[]): NamedTensor => ({ name, dtype: 'int64', dims: [values.length], data: BigInt64Array.from(values, (t) => BigInt(t)) });
              const reply = await client.call('rank_tokens', {}, [int64('prompt', prompt), int64('continuation', continuation)], { timeoutMs: timeouts.sessionSlack });
              return int64Column(reply.tensors, 'ranks', continuation.length, name);
            },
      scoreText: ownLoop
          ? null
          : async (tokens, window, cacheShape) => {
              const tensor: NamedTensor = { name: 'tokens', dtype: 'int64', dims: [tokens.length], data: BigInt64Array.from(tokens, (t) => BigInt(t)) };
              const { header } = await client.call('score_text', { window, cache_shape: cacheShape }, [tensor], { timeoutMs: timeouts.sessionSlack });
              return { nllSum: header.nll_sum, predicted: header.predicted };
            },
    };
    return {
      inputs: load.inputs,
      outputs: load.outputs,
      compileMs: load.compile_ms,
      facts: { ...load.facts, runtimeVersion: hello.version, python: hello.python },
      threads: load.threads,
      precision: load.precision,
      runsIn: { process: 'worker', binding: declaration.binding ?? `${runtimeModule} (Python) in a pbh worker`, pid: hello.pid },
      // A worker's runtime takes the batch size it was loaded for; the harness pads a short last batch.
      capabilities: { smallerBatch: false, maxConcurrency },
      library,
      sut,
      probes,
      generator,
      diagnostics: () => client.stderrTail(),
      dispose: () => {
        req.signal?.removeEventListener('abort', abort);
        return client.close({ timeoutMs: timeouts.close });
      },
    };
  }

  return {
    name,
    description: declaration.description,
    optionsSchema: optionsSchemaOf(manifest, declaration),
    devices: declaration.devices,
    precisions: declaration.precisions,
    processes: ['worker'],
    probe(): Promise<Availability> {
      const location = findVenvPython();
      if (!location) {
        return Promise.resolve({ available: false, reason: `${name} needs the project Python venv: ${describePythonSearch()}`, fix });
      }
      const key = `${name}\0${workerScript}\0${location.python}`;
      let cached = probeCache.get(key);
      if (!cached) {
        cached = probeOnce(location.python);
        probeCache.set(key, cached);
      }
      return cached;
    },
    prepare,
  };
}
