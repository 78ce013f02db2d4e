/** Keeps the last `limit` bytes written to a stream, for error messages about a process that failed. */
export class StderrTail {
  private chunks: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly limit = 8192) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.chunks.length > 1 && this.bytes - this.chunks[0]!.length >= this.limit) {
      this.bytes -= this.chunks.shift()!.length;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.limit)).toString('utf8').trimEnd();
  }
}
