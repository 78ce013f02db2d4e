import { closeSync, existsSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `run` through a shared page (the worker's side: pbh_worker/doorbell.py). A round trip through the frame stream
 * costs two process wake-ups (37-62 µs on a VM); here the worker polls the page for a while after each short run,
 * and the client, which knows when it does, writes the request there and polls for the reply, so neither side
 * sleeps.
 *
 * The page, little-endian int64 words: 0-2 the request (index, seq, check), 3-5 the reply (engine_ns, seq, check),
 * 6 whether the worker polls it now; a check is MAGIC ^ the two words before it, so a torn or reordered read is
 * read again.
 */
const MAGIC = 0x5042485f444f4f52n;
const PAGE_BYTES = 56;
/** engine_ns the worker answers for a run that raised: the run goes to the frame stream, where its error reply does. */
const FAILED = -1n;
let made = 0;

export class Doorbell {
  readonly path: string;
  private fd: number | undefined;
  private readonly request = new BigInt64Array(3);
  private readonly requestBytes = new Uint8Array(this.request.buffer);
  private readonly reply = new BigInt64Array(4);
  private readonly replyBytes = new Uint8Array(this.reply.buffer);

  /** A fresh zeroed page under /dev/shm (else the temp folder), or undefined where none can be made. */
  static create(): Doorbell | undefined {
    const folder = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
    const path = join(folder, `pbh-doorbell-${process.pid}-${++made}`);
    try {
      const fd = openSync(path, 'wx+', 0o600);
      writeSync(fd, new Uint8Array(PAGE_BYTES), 0, PAGE_BYTES, 0);
      return new Doorbell(path, fd);
    } catch {
      return undefined;
    }
  }

  private constructor(path: string, fd: number) {
    this.path = path;
    this.fd = fd;
  }

  /** Removes the file (both sides keep their descriptor or mapping). */
  unlink(): void {
    try {
      unlinkSync(this.path);
    } catch {
      // Already gone.
    }
  }

  close(): void {
    this.unlink();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Whether the worker says it polls the page now (it may stop right after: `await` is bounded for that). */
  polled(): boolean {
    if (this.fd === undefined) return false;
    readSync(this.fd, this.replyBytes, 0, 32, 24);
    return this.reply[3] === 1n;
  }

  ring(index: number, seq: number): void {
    if (this.fd === undefined) throw new Error('the doorbell is closed');
    const request = this.request;
    request[0] = BigInt(index);
    request[1] = BigInt(seq);
    request[2] = MAGIC ^ request[0]! ^ request[1]!;
    writeSync(this.fd, this.requestBytes, 0, 24, 0);
  }

  /**
   * Polls the page for the reply to `seq` until `untilNs` on hrtime. Nothing asynchronous: the caller's event loop is
   * held for at most that long. Returns the worker's engine_ns, or undefined if no reply came (or the run failed).
   */
  await(seq: number, untilNs: bigint): bigint | undefined {
    if (this.fd === undefined) return undefined;
    const want = BigInt(seq);
    const reply = this.reply;
    for (;;) {
      readSync(this.fd, this.replyBytes, 0, 24, 24);
      if (reply[1] === want && reply[2] === (MAGIC ^ reply[0]! ^ reply[1]!)) return reply[0] === FAILED ? undefined : reply[0];
      if (process.hrtime.bigint() > untilNs) return undefined;
    }
  }
}
