import { delimiter } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import type { z } from 'zod';
import { WorkerCrashedError, WorkerError, WorkerProtocolError, WorkerReplyError, WorkerTimeoutError } from './errors.js';
import { encodeFrame, FrameDecoder, FrameError, type Frame, type NamedTensor } from './framing.js';
import { trackWorker, untrackWorker, type Killable } from './orphans.js';
import { errorReplySchema, replySchemas, type Command, type FrameHeader } from './protocol.js';
import { StderrTail } from './stderr-tail.js';
import { removeTensorFile } from './tensor-file.js';

/** Folder holding the `pbh_worker` Python package (put on the worker's PYTHONPATH). */
export const WORKER_PYTHON_DIR = fileURLToPath(new URL('../../python/', import.meta.url));

export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;
const CLOSE_TIMEOUT_MS = 5_000;
const EXIT_GRACE_MS = 2_000;
const RESERVED_FIELDS = ['id', 'cmd', 'tensors', 'bytes_file'] as const;
export interface WorkerSpawnOptions {
  /** Python interpreter (usually the project venv's, see `findVenvPython`). */
  python: string;
  /** Absolute path of the engine's worker script; it is run as `python -m pbh_worker SCRIPT`. */
  script: string;
  args?: string[];
  /** Extra environment; PYTHONPATH entries are kept after the pbh_worker folder. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Names the worker in errors, e.g. "openvino worker". */
  label?: string;
  /** Receives the worker's stderr as it arrives (it is always kept in an 8 KB tail for errors). */
  onStderr?: (chunk: Buffer) => void;
}

export interface RequestOptions {
  timeoutMs?: number;
  /**
   * The tensors' bytes already lie in this file (tensor-file.ts `writeTensorFile`): the frame carries none, and the
   * file is removed once the request settles, however it does. For bulk moves (`load_samples`), not for a call per
   * batch, which a file's create and unlink would slow.
   */
  bytesFile?: string;
}

export interface Reply<H = FrameHeader> {
  header: H;
  tensors: NamedTensor[];
}

interface Pending {
  cmd: string;
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
  /** performance.now() after which the request has timed out (Infinity: never). */
  deadline: number;
  timeoutMs: number;
}

export interface WorkerExit {
  exitCode: number | undefined;
  signal: string | undefined;
}

type Refable = Partial<Record<'ref' | 'unref', () => unknown>>;

/**
 * One native worker process and the request/reply protocol over its stdin/stdout
 * (docs/worker-protocol.md). Requests may overlap; the worker answers them in order.
 */
export class WorkerClient implements Killable {
  readonly label: string;
  /** Resolves once the process has exited and its pipes are closed. */
  readonly exited: Promise<WorkerExit>;
  private readonly subprocess: ResultPromise;
  private readonly stdin: Writable;
  private readonly decoder = new FrameDecoder();
  private readonly tail = new StderrTail();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private exit: WorkerExit | undefined;
  /** Why we killed it, when we did: makes the crash error say what really happened. */
  private killReason: string | undefined;
  private rssPeak: number | undefined;
  /**
   * One timer for every pending request, armed for the earliest deadline: arming and clearing a timer per request
   * costs a timed run's round trip several µs. Unref'd: while a request is pending the pipes keep Node alive.
   */
  private watchdog: NodeJS.Timeout | undefined;
  private watchdogAt = Infinity;
  static spawn(options: WorkerSpawnOptions): WorkerClient {
    return new WorkerClient(options);
  }

  private constructor(options: WorkerSpawnOptions) {
    this.label = options.label ?? `worker ${options.script}`;
    const pythonPath = [WORKER_PYTHON_DIR, options.env?.PYTHONPATH ?? process.env.PYTHONPATH]
      .filter((p): p is string => Boolean(p))
      .join(delimiter);
    this.subprocess = execa(options.python, ['-m', 'pbh_worker', options.script, ...(options.args ?? [])], {
      cwd: options.cwd,
      env: {
        ...options.env,
        PYTHONPATH: pythonPath,
        PYTHONUNBUFFERED: '1',
        PBH_PARENT_PID: String(process.pid),
      },
      extendEnv: true,
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      cleanup: true,
    });
    trackWorker(this);
    this.stdin = this.subprocess.stdin as Writable;
    // EPIPE after the worker died surfaces through the exit path with the real cause.
    this.stdin.on('error', () => undefined);
    const stdout = this.subprocess.stdout as Readable;
    const stderr = this.subprocess.stderr as Readable;
    stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
    stderr.on('data', (chunk: Buffer) => {
      this.tail.push(chunk);
      options.onStderr?.(chunk);
    });
    this.exited = this.subprocess.then((result) => {
      const exit: WorkerExit = {
        exitCode: typeof result.exitCode === 'number' ? result.exitCode : undefined,
        signal: result.signal ?? undefined,
      };
      this.onExit(exit, result.failed && result.exitCode === undefined && !result.signal ? result.shortMessage : undefined);
      return exit;
    });
    this.updateRef();
  }

  get pid(): number | undefined {
    return this.subprocess.pid;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** Highest peak resident set size the worker has reported (every reply carries one). */
  get rssPeakBytes(): number | undefined {
    return this.rssPeak;
  }

  stderrTail(): string {
    return this.tail.text();
  }

  /**
   * Sends one command; resolves with the reply header (unchecked beyond framing) and its tensors. The header is
   * `{"id":..,"cmd":..,...fields}` in that order; `id`, `cmd` and `tensors` are reserved.
   */
  request(cmd: string, fields: Record<string, unknown> = {}, tensors: readonly NamedTensor[] = [], options: RequestOptions = {}): Promise<Reply> {
    const reply = this.sendRequest(cmd, fields, tensors, options);
    const file = options.bytesFile;
    return file === undefined ? reply : reply.finally(() => removeTensorFile(file));
  }

  private sendRequest(cmd: string, fields: Record<string, unknown>, tensors: readonly NamedTensor[], options: RequestOptions): Promise<Reply> {
    if (this.exit) return Promise.reject(this.crashedError(undefined, `so "${cmd}" cannot be sent`));
    const reserved = RESERVED_FIELDS.find((key) => key in fields);
    if (reserved) return Promise.reject(new TypeError(`"${reserved}" is a reserved header field; "${cmd}" cannot carry it`));
    const id = this.nextId++;
    let chunks: Buffer[];
    try {
      chunks = encodeFrame({ id, cmd, ...fields }, tensors, options.bytesFile);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.send(id, cmd, chunks, options);
  }

  private send(id: number, cmd: string, chunks: Buffer[], options: RequestOptions): Promise<Reply> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    return new Promise<Reply>((resolve, reject) => {
      const deadline = Number.isFinite(timeoutMs) ? performance.now() + timeoutMs : Infinity;
      this.pending.set(id, { cmd, resolve, reject, deadline, timeoutMs });
      if (deadline < this.watchdogAt) this.armWatchdog(deadline);
      this.updateRef();
      if (chunks.length === 1) {
        this.stdin.write(chunks[0]!);
      } else {
        this.stdin.cork();
        for (const chunk of chunks) this.stdin.write(chunk);
        this.stdin.uncork();
      }
    });
  }

  /** `request` plus validation of the command's reply fields. */
  async call<C extends Command>(
    cmd: C,
    fields: Record<string, unknown> = {},
    tensors: readonly NamedTensor[] = [],
    options: RequestOptions = {},
  ): Promise<Reply<z.infer<(typeof replySchemas)[C]>>> {
    const reply = await this.request(cmd, fields, tensors, options);
    const parsed = replySchemas[cmd].safeParse(reply.header);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(header)'}: ${i.message}`).join('; ');
      throw new WorkerProtocolError(`${this.label} answered "${cmd}" with a malformed reply (${issues})`, this.label, this.tail.text());
    }
    return { header: parsed.data as z.infer<(typeof replySchemas)[C]>, tensors: reply.tensors };
  }

  /** Asks the worker to close, waits briefly for it to exit, then kills it. Never throws. */
  async close(options: RequestOptions = {}): Promise<void> {
    if (this.exit) return;
    try {
      await this.request('close', {}, [], { timeoutMs: options.timeoutMs ?? CLOSE_TIMEOUT_MS });
    } catch {
      // A worker that cannot close cleanly is killed below; the caller only needs it gone.
    }
    this.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, EXIT_GRACE_MS);
    });
    await Promise.race([this.exited, grace]);
    clearTimeout(timer);
    if (!this.exit) this.kill('close: the worker did not exit after "close"');
    await this.exited;
  }

  /** SIGKILLs the worker now; pending requests reject with WorkerCrashedError naming `reason`. */
  kill(reason = 'killed by the harness'): void {
    if (this.exit) return;
    this.killReason ??= reason;
    this.subprocess.kill('SIGKILL');
  }

  killNow(): void {
    this.kill('the harness process is exiting');
  }

  private onStdout(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      this.failStream(error);
      return;
    }
    for (const frame of frames) this.onFrame(frame);
  }

  private failStream(error: unknown): void {
    const detail = error instanceof FrameError ? error.message : String(error);
    const protocolError = new WorkerProtocolError(
      `${this.label} wrote something that is not a protocol frame on its stdout: ${detail}. ` +
        'Something in the worker wrote to the frame stream directly; the worker was killed',
      this.label,
      this.tail.text(),
    );
    this.rejectAll(protocolError);
    this.kill('protocol error');
  }

  private onFrame(frame: Frame): void {
    const rss = frame.header.rss_peak_bytes;
    if (typeof rss === 'number') this.rssPeak = Math.max(this.rssPeak ?? 0, rss);
    if (frame.header.ok === false) {
      this.onErrorReply(frame.header);
      return;
    }
    const id = frame.header.id;
    const pending = id === null ? undefined : this.pending.get(id);
    if (!pending) {
      this.failStream(new FrameError(`a reply with id ${String(id)} that matches no pending request`, ''));
      return;
    }
    this.settle(id!);
    pending.resolve({ header: frame.header, tensors: frame.tensors });
  }

  private onErrorReply(header: FrameHeader): void {
    const parsed = errorReplySchema.safeParse(header);
    if (!parsed.success) {
      this.failStream(new FrameError(`an error reply without "error"/"kind": ${JSON.stringify(header).slice(0, 300)}`, ''));
      return;
    }
    const reply = parsed.data;
    const targets = reply.id === null ? [...this.pending.keys()] : [reply.id];
    for (const id of targets) {
      const pending = this.pending.get(id);
      if (!pending) continue;
      this.settle(id);
      pending.reject(new WorkerReplyError(this.label, pending.cmd, reply.kind, reply.error, reply.traceback, reply.fatal, this.tail.text()));
    }
  }

  private armWatchdog(at: number): void {
    clearTimeout(this.watchdog);
    this.watchdogAt = at;
    this.watchdog = setTimeout(() => this.onWatchdog(), Math.max(0, at - performance.now()));
    this.watchdog.unref();
  }

  /** Times out every request past its deadline, then sleeps until the next deadline of those still pending. */
  private onWatchdog(): void {
    this.watchdog = undefined;
    this.watchdogAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const [id, pending] of [...this.pending]) {
      if (pending.deadline <= now) this.onTimeout(id, pending);
      else next = Math.min(next, pending.deadline);
    }
    if (next < Infinity && this.pending.size > 0) this.armWatchdog(next);
  }

  private onTimeout(id: number, pending: Pending): void {
    if (!this.pending.has(id)) return;
    this.settle(id);
    this.kill(`timeout of "${pending.cmd}" after ${pending.timeoutMs} ms`);
    pending.reject(new WorkerTimeoutError(this.label, pending.cmd, pending.timeoutMs, this.tail.text()));
  }

  private onExit(exit: WorkerExit, spawnFailure: string | undefined): void {
    this.exit = exit;
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
    this.watchdogAt = Infinity;
    untrackWorker(this);
    let detail = spawnFailure;
    if (!this.killReason) {
      try {
        this.decoder.end();
      } catch (error) {
        detail = [detail, (error as Error).message].filter(Boolean).join('; ');
      }
    }
    for (const [id, pending] of [...this.pending]) {
      this.settle(id);
      pending.reject(this.crashedError(pending.cmd, detail));
    }
  }

  private crashedError(during: string | undefined, detail?: string): WorkerError {
    const exit = this.exit ?? { exitCode: undefined, signal: undefined };
    const why = [this.killReason, detail].filter(Boolean).join('; ');
    return new WorkerCrashedError(this.label, exit.exitCode, exit.signal, during, this.tail.text(), why || undefined);
  }

  private rejectAll(error: Error): void {
    for (const [id, pending] of [...this.pending]) {
      this.settle(id);
      pending.reject(error);
    }
  }

  private settle(id: number): void {
    this.pending.delete(id);
    this.updateRef();
  }

  /**
   * An idle worker must not keep Node alive: a harness that forgets dispose() still exits, and the 'exit'
   * hook kills the worker. While a request is pending the handles are ref'd so Node waits for the reply.
   */
  private updateRef(): void {
    if (this.exit) return;
    const method = this.pending.size > 0 ? 'ref' : 'unref';
    for (const handle of [this.subprocess, this.subprocess.stdin, this.subprocess.stdout, this.subprocess.stderr] as Refable[]) {
      handle[method]?.();
    }
  }
}
