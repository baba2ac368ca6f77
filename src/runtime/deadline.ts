/**
 * The signals a call runs under. `signal` fires when the method's `timeoutMs` passes or
 * when the client goes away, whichever comes first: it is `ctx.signal`. `timeoutSignal`
 * fires on the timeout only, and keeps running after a client left, so an isolated worker
 * that ignores its signal is still terminated at the deadline. Own timer (not
 * `AbortSignal.timeout`) so a finished call clears it instead of leaving it pending.
 */
export class CallTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`call exceeded its ${timeoutMs} ms timeout`);
    this.name = "TimeoutError";
  }
}

export interface CallDeadline {
  signal: AbortSignal;
  timeoutSignal: AbortSignal;
  /** Clears the timer; call it once the method's work has really ended. */
  dispose(): void;
}

export function startDeadline(timeoutMs: number, clientSignal: AbortSignal): CallDeadline {
  const either = new AbortController();
  const timeout = new AbortController();
  const timer = setTimeout(() => {
    const reason = new CallTimeoutError(timeoutMs);
    timeout.abort(reason);
    either.abort(reason);
  }, timeoutMs);
  const onClientGone = () => either.abort(clientSignal.reason);
  if (clientSignal.aborted) onClientGone();
  else clientSignal.addEventListener("abort", onClientGone, { once: true });
  return {
    signal: either.signal,
    timeoutSignal: timeout.signal,
    dispose() {
      clearTimeout(timer);
      clientSignal.removeEventListener("abort", onClientGone);
    },
  };
}

/** Settles with `work`, or rejects with the signal's reason as soon as it fires. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Nobody awaits `work` any more: its own rejection must not go unhandled.
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
