import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { z } from 'zod';
import { describePythonSearch, findProjectRoot, findVenvPython, VENV_FIX } from '../worker/venv.js';
import type { DomainWindow, EnergyReader, EnergyReaderPlugin, OpenedReader } from './reader.js';

/** The sidecar samples every 10 ms: faster than NVML's counter updates (20-100 ms), so it sees each one. */
export const NVML_SAMPLE_INTERVAL_S = 0.01;
const REPLY_TIMEOUT_MS = 30_000;

const DeviceSchema = z.object({ index: z.number().int().nonnegative(), name: z.string(), energy_error: z.string().nullable(), power_error: z.string().nullable() });
const HelloSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('hello'), interval_s: z.number().positive(), devices: z.array(DeviceSchema).min(1) }),
  z.object({ kind: z.literal('unavailable'), reason: z.string() }),
]);
const WindowDeviceSchema = z.object({
  index: z.number().int().nonnegative(),
  seconds: z.number().nonnegative(),
  error: z.string().nullable(),
  samples: z.number().int().nonnegative(),
  energy_joules: z.number().nonnegative().optional(),
  energy_ticks: z.number().int().nonnegative().optional(),
  energy_period_s: z.number().positive().nullable().optional(),
  power_joules: z.number().nonnegative().optional(),
  power_ticks: z.number().int().nonnegative().optional(),
  power_period_s: z.number().positive().nullable().optional(),
});
const ReplySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('begun') }),
  z.object({ kind: z.literal('window'), devices: z.array(WindowDeviceSchema) }),
  z.object({ kind: z.literal('error'), reason: z.string() }),
]);
type WindowDevice = z.infer<typeof WindowDeviceSchema>;
type Device = z.infer<typeof DeviceSchema>;

/** Where the sidecar runs: the venv's python with python/ on PYTHONPATH (tests put a pynvml double ahead of it). */
export interface NvmlOptions {
  python?: string;
  pythonPath?: string[];
  intervalS?: number;
}

/**
 * A GPU's window: the total energy counter where the GPU has one (nvml_energy), with the power samples' integral as
 * its fallback (nvml_power) for a window too short for the counter; power alone where the counter is not supported.
 */
export function gpuWindows(device: Device, w: WindowDevice | undefined): DomainWindow {
  const base = { name: `gpu-${device.index}`, kind: 'gpu', device: 'gpu', counted: true } as const;
  if (!w) return { ...base, method: 'nvml_energy', joules: null, seconds: 0, ticks: null, updatePeriodS: null, reason: `the NVML sidecar sent no window for GPU ${device.index}` };
  const power: DomainWindow | undefined =
    w.power_joules === undefined
      ? undefined
      : {
          ...base,
          method: 'nvml_power',
          joules: w.error || w.power_joules === 0 ? null : w.power_joules,
          seconds: w.seconds,
          ticks: w.power_ticks ?? null,
          updatePeriodS: w.power_period_s ?? null,
          reason: w.error ? `GPU ${device.index} (${device.name}): ${w.error}` : w.power_joules === 0 ? `GPU ${device.index} (${device.name}) reported 0 mW throughout` : `${w.samples} power samples every ${NVML_SAMPLE_INTERVAL_S * 1000} ms, integrated (nvmlDeviceGetPowerUsage)`,
        };
  if (w.energy_joules === undefined) {
    const why = device.energy_error ? `the energy counter is not there (${device.energy_error}): power samples instead` : 'the window had fewer than two samples';
    return power ? { ...power, reason: `${why}; ${power.reason}` } : { ...base, method: 'nvml_power', joules: null, seconds: w.seconds, ticks: null, updatePeriodS: null, reason: `GPU ${device.index} (${device.name}): ${why}; power: ${device.power_error ?? 'none'}` };
  }
  return {
    ...base,
    method: 'nvml_energy',
    joules: w.error || w.energy_joules === 0 ? null : w.energy_joules,
    seconds: w.seconds,
    ticks: w.energy_ticks ?? null,
    updatePeriodS: w.energy_period_s ?? null,
    reason: w.error ? `GPU ${device.index} (${device.name}): ${w.error}` : w.energy_joules === 0 ? `GPU ${device.index} (${device.name})'s energy counter did not move in ${w.seconds.toFixed(3)} s` : null,
    ...(power ? { fallback: power } : {}),
  };
}

/** A child's pipe is a net.Socket, which Node types as a plain stream: its ref/unref, where the platform has them. */
const handle = (stream: object): { ref?: () => void; unref?: () => void } => stream as { ref?: () => void; unref?: () => void };

class Sidecar {
  private readonly lines: Interface;
  private readonly queue: ((line: string | null) => void)[] = [];
  private readonly buffered: string[] = [];
  private exited = false;

  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    this.lines = createInterface({ input: child.stdout });
    this.lines.on('line', (line) => {
      const waiter = this.queue.shift();
      if (waiter) waiter(line);
      else this.buffered.push(line);
    });
    child.on('exit', () => {
      this.exited = true;
      for (const waiter of this.queue.splice(0)) waiter(null);
    });
    // A sidecar that closed its end before its exit was seen makes a write fail with EPIPE, emitted as an event: the
    // reads already report a gone sidecar, and an unhandled one would end pbh with every Profile of the run.
    child.stdin.on('error', () => undefined);
    // An idle sidecar must not keep pbh alive; its stdin closes when pbh exits, and it exits on end of input.
    this.idle();
  }

  private idle(): void {
    this.child.unref();
    handle(this.child.stdout).unref?.();
    handle(this.child.stdin).unref?.();
  }

  /** The next line, or null when the sidecar exited or took longer than REPLY_TIMEOUT_MS. */
  next(): Promise<string | null> {
    const ready = this.buffered.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.exited) return Promise.resolve(null);
    this.child.ref();
    handle(this.child.stdout).ref?.();
    return new Promise<string | null>((resolve) => {
      const timer = setTimeout(() => finish(null), REPLY_TIMEOUT_MS);
      const finish = (line: string | null): void => {
        clearTimeout(timer);
        const i = this.queue.indexOf(finish);
        if (i >= 0) this.queue.splice(i, 1);
        this.idle();
        resolve(line);
      };
      this.queue.push(finish);
    });
  }

  send(command: string): void {
    if (!this.exited) this.child.stdin.write(`${command}\n`);
  }

  close(): void {
    this.send('quit');
    this.child.stdin.end();
  }
}

function parseLine<S extends z.ZodType>(schema: S, line: string | null, what: string, tail: () => string): z.output<S> {
  if (line === null) throw new Error(`the NVML sidecar (python -m nvml_energy) ended or did not answer ${what} within ${REPLY_TIMEOUT_MS / 1000} s${tail() ? `: ${tail()}` : ''}`);
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new Error(`the NVML sidecar answered ${what} with something other than JSON: ${line.slice(0, 200)}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new Error(`the NVML sidecar's answer to ${what} is out of its schema: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export class NvmlReader implements EnergyReader {
  readonly name = 'nvml';
  constructor(
    private readonly sidecar: Sidecar,
    readonly devices: readonly Device[],
    private readonly tail: () => string,
  ) {}

  async begin(): Promise<void> {
    this.sidecar.send('begin');
    const reply = parseLine(ReplySchema, await this.sidecar.next(), 'begin', this.tail);
    if (reply.kind !== 'begun') throw new Error(`the NVML sidecar answered begin with ${JSON.stringify(reply)}`);
  }

  /** The sidecar samples on its own thread: nothing to do from here. */
  async poll(): Promise<void> {}

  async end(): Promise<DomainWindow[]> {
    this.sidecar.send('end');
    const reply = parseLine(ReplySchema, await this.sidecar.next(), 'end', this.tail);
    if (reply.kind !== 'window') throw new Error(`the NVML sidecar answered end with ${JSON.stringify(reply)}`);
    return this.devices.map((d) => gpuWindows(d, reply.devices.find((w) => w.index === d.index)));
  }

  async close(): Promise<void> {
    this.sidecar.close();
  }
}

/** NVML through nvidia-ml-py in the project venv (python/nvml_energy): every GPU it sees, or why there is none. */
export function nvmlPlugin(options: NvmlOptions = {}): EnergyReaderPlugin {
  return {
    name: 'nvml',
    async open(): Promise<OpenedReader> {
      const location = options.python ? { python: options.python, root: undefined } : findVenvPython();
      if (!location) return { unavailable: `NVML is read through nvidia-ml-py in the project venv, and ${describePythonSearch()}. Fix: ${VENV_FIX}` };
      const root = location.root ?? findProjectRoot();
      const scripts = root ? path.join(root, 'python') : undefined;
      if (!scripts || !existsSync(path.join(scripts, 'nvml_energy', '__main__.py'))) return { unavailable: `python/nvml_energy was not found above ${process.cwd()}: run pbh from the PBH project folder` };
      const child = spawn(location.python, ['-m', 'nvml_energy', String(options.intervalS ?? NVML_SAMPLE_INTERVAL_S)], {
        env: { ...process.env, PYTHONPATH: [...(options.pythonPath ?? []), scripts].join(path.delimiter), PYTHONDONTWRITEBYTECODE: '1' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-2000);
      });
      handle(child.stderr).unref?.();
      child.on('error', () => undefined);
      const sidecar = new Sidecar(child);
      const tail = (): string => stderr.trim();
      try {
        const hello = parseLine(HelloSchema, await sidecar.next(), 'its start', tail);
        if (hello.kind === 'unavailable') {
          sidecar.close();
          return { unavailable: hello.reason };
        }
        return { reader: new NvmlReader(sidecar, hello.devices, tail) };
      } catch (e) {
        sidecar.close();
        return { unavailable: (e as Error).message };
      }
    },
  };
}
