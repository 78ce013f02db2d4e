/** Failures of a native worker. Each carries the worker's label and the tail of its stderr. */
export class WorkerError extends Error {
  constructor(
    message: string,
    readonly label: string,
    readonly stderrTail: string,
  ) {
    super(stderrTail ? `${message}\n--- last stderr of ${label} ---\n${stderrTail}` : message);
    this.name = new.target.name;
  }
}

/** The worker did not answer within the command's timeout; it has been SIGKILLed. */
export class WorkerTimeoutError extends WorkerError {
  constructor(
    label: string,
    readonly cmd: string,
    readonly timeoutMs: number,
    stderrTail: string,
  ) {
    super(
      `${label} did not answer "${cmd}" within ${timeoutMs} ms and was killed (SIGKILL); ` +
        'raise the timeout if the runtime is just slow, otherwise see its stderr',
      label,
      stderrTail,
    );
  }
}

/** The worker exited (or could not start) while requests were pending or before a request was sent. */
export class WorkerCrashedError extends WorkerError {
  constructor(
    label: string,
    readonly exitCode: number | undefined,
    readonly signal: string | undefined,
    readonly during: string | undefined,
    stderrTail: string,
    detail?: string,
  ) {
    const how = signal ? `was killed by ${signal}` : exitCode !== undefined ? `exited with code ${exitCode}` : 'is not running';
    const when = during ? ` while "${during}" was pending` : '';
    super(`${label} ${how}${when}${detail ? ` (${detail})` : ''}`, label, stderrTail);
  }
}

/** The worker wrote something on its frame stream that is not a frame; the stream cannot be trusted and the worker is killed. */
export class WorkerProtocolError extends WorkerError {}

/** The worker answered {"ok": false}: the runtime raised. Unless `fatal`, the worker is still usable. */
export class WorkerReplyError extends WorkerError {
  constructor(
    label: string,
    readonly cmd: string,
    readonly kind: string,
    readonly runtimeMessage: string,
    readonly traceback: string,
    readonly fatal: boolean,
    stderrTail: string,
  ) {
    super(`${label} failed "${cmd}" (${kind}): ${runtimeMessage}`, label, stderrTail);
  }
}
